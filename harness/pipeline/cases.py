"""What to measure: cases resolved from settings (a server and a scenario, overrides applied), checked
before anything runs, adjusted per kind of run and by the design check, and their runs by thread count."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from harness.config.scenarios import available_scenarios, load_scenario, select_scenarios
from harness.config.servers import load_server
from harness.config.settings import Settings, apply_overrides
from harness.measure.session import Reporter
from harness.model import Kind, RunResult, Scenario, Server
from harness.pipeline import design_check
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


@dataclass(frozen=True)
class ScenarioCase:
    """One scenario test of ``pytest scenarios/``: a case at one thread count (timing) or its cost runs.

    Ids: ``oltp_point_select-mariadb-local-2t`` (timing) and ``oltp_point_select-mariadb-local-cost``
    (instructions per transaction under callgrind, at the scenario's first cost thread count).
    """

    case: Case
    server_name: str
    threads: int
    kind: Kind = "time"

    @property
    def scenario(self) -> Scenario:
        return self.case.scenario

    @property
    def id(self) -> str:
        what = "cost" if self.kind == "cost" else f"{self.threads}t"
        return f"{self.scenario.name}-{self.server_name}-{what}"

    def measured(self) -> Case:
        """The case as the pipeline measures it: timing at this item's thread count only."""
        if self.kind == "cost":
            return self.case
        return Case(self.case.server, self.scenario.with_overrides(threads=[self.threads]))


def scenario_cases(settings: Settings) -> list[ScenarioCase]:
    """Every scenario x server x (thread count | cost) the settings select, resolved as :func:`resolve` does.

    The scenarios are ``settings.scenarios`` (names or globs) or the whole catalogue; cost items only for
    servers dbperf starts itself (an external server cannot run under callgrind).
    """
    out: list[ScenarioCase] = []
    kinds = settings.kinds()
    names = select_scenarios(settings.scenarios, settings.scenarios_dir) or available_scenarios(settings.scenarios_dir)
    for name in names:
        for server in settings.servers:
            case = resolve(settings, name, server)
            if "time" in kinds:
                out.extend(ScenarioCase(case, server, threads) for threads in case.scenario.threads)
            if "cost" in kinds and case.server.provider != "external":
                out.append(ScenarioCase(case, server, case.scenario.cost.threads[0], "cost"))
    return out


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


def cost_repetitions(settings: Settings, scenario: Scenario) -> int:
    """Cost runs a side, as :func:`for_kind` sets them: what plans, estimates and runs all count."""
    return settings.repetitions if settings.cost and settings.repetitions is not None else scenario.cost.repetitions


def kind_threads(scenario: Scenario, kind: Kind) -> tuple[int, ...]:
    return scenario.cost.threads if kind == "cost" else scenario.threads


def forced(settings: Settings) -> bool:
    return settings.repetitions is not None and not settings.cost


def with_decision(
    decision: design_check.Decision, cases: Sequence[Case], warnings: list[str], reporter: Reporter
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
