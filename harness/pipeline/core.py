"""Wiring of the stages for one invocation, shared by the CLI and the pytest plugin.

config -> testbed -> provision -> dataset -> run -> store (judging and reports live elsewhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.config.scenarios import load_scenario
from harness.config.servers import load_target
from harness.config.settings import Settings, current_git_sha
from harness.dataset import DatasetCache
from harness.model import RunResult, Scenario, ServerTarget
from harness.run.measure import Reporter, Session, measure, new_group_id, plan_runs
from harness.store.local import Store
from harness.sysbench.driver import check_version
from harness.testbed import fingerprint, preflight


@dataclass(frozen=True)
class Prepared:
    """A scenario and a target resolved from settings, with overrides applied."""

    scenario: Scenario
    target: ServerTarget


def resolve(settings: Settings, scenario_name: str, target_name: str | None = None) -> Prepared:
    scenario = load_scenario(scenario_name, settings.scenarios_dir, settings.profile)
    scenario = scenario.with_overrides(
        threads=settings.threads,
        time_s=settings.time,
        warmup_s=settings.warmup,
        repetitions=settings.repetitions,
    )
    target = load_target(target_name or settings.server, settings.servers_dir)
    return Prepared(scenario, target)


def open_session(settings: Settings, reporter: Reporter, *, containers: bool, check: bool = True) -> Session:
    """Check sysbench, fingerprint the testbed, warn about a busy machine, open the store."""
    version = check_version()
    testbed = fingerprint(version, with_engine=containers)
    if check:
        for warning in preflight():
            reporter.phase(f"warning: {warning}")
    store = Store(settings.store)
    return Session(
        cache=DatasetCache(settings.cache_dir),
        testbed=testbed,
        git_sha=current_git_sha(settings.root),
        save=store.save,
        reporter=reporter,
        sysbench_version=version,
    )


def run_scenario(
    settings: Settings,
    scenario_name: str,
    reporter: Reporter,
    *,
    target_name: str | None = None,
    session: Session | None = None,
    label: str = "",
) -> list[RunResult]:
    """Run every repetition and thread count of a scenario on a target; every run is stored."""
    prepared = resolve(settings, scenario_name, target_name)
    session = session or open_session(settings, reporter, containers=prepared.target.provider == "container")
    contexts = plan_runs(
        prepared.target,
        prepared.scenario,
        testbed=session.testbed,
        git_sha=session.git_sha,
        group_id=new_group_id(),
        label=label,
    )
    return measure(session, contexts)


def failed_runs(results: Sequence[RunResult]) -> list[RunResult]:
    return [r for r in results if not r.ok]
