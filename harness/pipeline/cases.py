"""What to measure: cases resolved from settings (a server and a scenario, overrides applied), checked
before anything runs, adjusted per kind of run and by the design check, and their runs by thread count."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.config.settings import Settings, apply_overrides
from harness.model import Kind, RunResult, Scenario, Server
from harness.pipeline import design
from harness.run.session import Reporter
from harness.servers.variables import check_requested


@dataclass(frozen=True)
class Case:
    """A scenario and a server resolved from settings, with the command-line overrides applied."""

    server: Server
    scenario: Scenario


def resolve(settings: Settings, scenario_name: str, server_name: str | None = None) -> Case:
    """The scenario (profile and overrides from ``settings``) and the server it runs on."""
    scenario = apply_overrides(load_scenario(scenario_name, settings.scenarios_dir, settings.profile), settings)
    return Case(load_server(server_name or settings.server, settings.servers_dir), scenario)


def checked(*pairs: tuple[Server, Scenario]) -> None:
    """Refuse, before anything runs, server settings a scenario cannot work with (never override them)."""
    for server, scenario in pairs:
        if server.provider != "external":
            check_requested(server, scenario)


def for_kind(settings: Settings, case: Case, kind: Kind) -> Case:
    """In cost-only mode ``--repetitions`` sets the cost runs; otherwise it sets the timing runs."""
    if kind == "cost" and settings.cost and settings.repetitions is not None:
        cost = dataclasses.replace(case.scenario.cost, repetitions=settings.repetitions)
        return Case(case.server, dataclasses.replace(case.scenario, cost=cost))
    return case


def kind_threads(scenario: Scenario, kind: Kind) -> tuple[int, ...]:
    return scenario.cost.threads if kind == "cost" else scenario.threads


def forced(settings: Settings) -> bool:
    return settings.repetitions is not None and not settings.cost


def with_decision(
    decision: design.Decision, cases: Sequence[Case], warnings: list[str], reporter: Reporter
) -> list[Case]:
    if decision.repetitions is None:
        return list(cases)
    warnings.append(decision.note)
    reporter.phase(f"note: {decision.note}")
    return [Case(c.server, c.scenario.with_overrides(repetitions=decision.repetitions)) for c in cases]


def by_threads(runs: Sequence[RunResult]) -> dict[tuple[Kind, int], list[RunResult]]:
    out: dict[tuple[Kind, int], list[RunResult]] = {}
    for one in runs:
        out.setdefault((one.kind, one.threads), []).append(one)
    return dict(sorted(out.items()))
