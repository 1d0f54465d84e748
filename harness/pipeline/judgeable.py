"""Before a gate measures: whether each comparison has anything to judge against, known without a run.

A gate judges its runs against stored baselines (timing: this testbed's; cost: the committed ones,
which travel and are keyed by the server build). Most of what makes a baseline comparable is known
before the first run: whether the file exists, the scenario definition it was recorded with (its hash:
the cost hash for cost runs) and the server build (the binary's GNU build-id). What only a started
server tells (its version string, its effective configuration) is still checked after the runs
(:func:`harness.judge.baseline_match.incomparable_reason`).

The rule (docs/usage.md, "Baselines"): a comparison with nothing to judge against is said before
anything runs, in one line with the command that records one; when nothing of an invocation can be
judged, the gate measures nothing (a pytest case is skipped at once), never after minutes of measuring,
unless ``--measure-unjudged`` (``DBPERF_MEASURE_UNJUDGED``) asks for the runs anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from harness.config.settings import Settings
from harness.judge.baselines import Baseline
from harness.model import Kind, Scenario, Server
from harness.pipeline.cases import Case, for_kind, kind_threads


@dataclass(frozen=True)
class Unjudged:
    """One scenario x server x kind whose every thread count has nothing to judge against, and why."""

    scenario: Scenario
    server: Server
    kind: Kind
    threads: tuple[int, ...]
    reason: str
    command: str  # the exact recording that makes one

    def line(self) -> str:
        """``nothing to judge tpcc (cost, 1t) on mariadb-local against: no cost baseline ...; record one with: ...``"""
        threads = ", ".join(f"{t}t" for t in self.threads)
        word = "cost" if self.kind == "cost" else "timing"
        return (
            f"nothing to judge {self.scenario.name} ({word}, {threads}) on {self.server.name} against: "
            f"{self.reason}; record one with: {self.command}"
        )


def reason_before(baseline: Baseline | None, scenario: Scenario, kind: Kind, build: str) -> str | None:
    """Why runs of ``scenario`` of ``kind`` on a server of ``build`` could not be judged against
    ``baseline``, as far as it is known before they run (None: they may be)."""
    if baseline is None:
        return (
            f"no cost baseline for {scenario.profile} profile runs of this scenario"
            if kind == "cost"
            else f"no timing baseline for {scenario.profile} profile runs of this scenario on this testbed"
        )
    expected = scenario.cost_hash if kind == "cost" else scenario.definition_hash
    if expected and baseline.scenario_hash and baseline.scenario_hash != expected:
        return f"baseline not comparable: the scenario definition changed (hash {baseline.scenario_hash} -> {expected})"
    if build and baseline.build_id and baseline.build_id != build:
        return (
            f"baseline not comparable: it was recorded on another server build ({baseline.build_id[:12]}, this "
            f"one is {build[:12]}); compare the two builds side by side with 'dbperf compare'"
        )
    return None


Lookup = Callable[[Case, Kind, int], "Baseline | None"]
"""``lookup(case, kind, threads)``: the stored baseline of a case for a kind and thread count, or None."""


def of_gate(
    settings: Settings,
    cases: Sequence[Case],
    kinds: Sequence[Kind],
    lookup: Lookup,
    build: Callable[[Case], str],
    hints: Mapping[tuple[str, str], str],
) -> list[Unjudged]:
    """Every case x kind of a gate none of whose thread counts can be judged, with the recording that
    makes a baseline (``hints``, :func:`harness.pipeline.advice.record_hints`; ``build(case)``: its
    server's build-id, "" when it cannot be read; a gate's from the session's server setup)."""
    out = []
    for case in cases:
        for kind in kinds:
            c = for_kind(settings, case, kind)
            threads = kind_threads(c.scenario, kind)
            reasons = [reason_before(lookup(c, kind, t), c.scenario, kind, build(c)) for t in threads]
            if threads and all(r is not None for r in reasons):
                command = hints.get((kind, c.scenario.name), "")
                out.append(Unjudged(c.scenario, c.server, kind, tuple(threads), str(reasons[0]), command))
    return out


def of_session(settings: Settings, cases: Sequence[tuple[Case, Kind]]) -> list[Unjudged]:
    """What of a ``pytest scenarios/`` session has nothing to judge against, known before it starts: each
    case x kind (a pytest item measures one kind), its baselines found as a gate finds them (timing: this
    testbed's), with the recordings a gate would suggest (:func:`of_gate`)."""
    from harness.judge.baselines import find_baseline
    from harness.measure.provision import readable_setups
    from harness.pipeline import advice, design_check
    from harness.sysbench.driver import check_version
    from harness.testbed import fingerprint

    version = check_version()
    testbeds = {
        engine: fingerprint(version, with_engine=engine, hardware_class=settings.testbed_class)
        for engine in {c.server.provider == "container" for c, _ in cases}
    }

    def lookup(case: Case, kind: Kind, threads: int) -> Baseline | None:
        testbed = testbeds[case.server.provider == "container"]
        s = case.scenario
        return find_baseline(settings.baselines_dir, testbed, case.server.name, s.name, s.profile, threads, kind)

    setups = readable_setups([(c.server, c.scenario) for c, _ in cases], version)

    def build(case: Case) -> str:
        setup = setups.get((case.server.name, case.scenario.name))
        return setup.server_build if setup is not None else ""

    out: list[Unjudged] = []
    for kind in dict.fromkeys(k for _, k in cases):
        of_kind = [c for c, k in cases if k == kind]
        every = advice.baseline_plan(settings, of_kind, [kind], lookup)
        runs = design_check.baseline_runs([p for p, _ in every], settings.alpha, lambda p: p.kind == "time")
        out += of_gate(settings, of_kind, [kind], lookup, build, advice.record_hints(settings, of_kind, runs))
    return out
