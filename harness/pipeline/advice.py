"""The commands dbperf suggests, built so that they work as printed and are the right ones.

A suggested ``dbperf baseline record`` carries what the invocation that suggests it was told, so that
it records the baseline that invocation reads: the profile, the thread counts and durations it overrode,
the catalogue and baselines folders and the testbed class it was given. A suggested timing recording
also carries the repetitions the gate's design check needs (:func:`harness.pipeline.design_check.
baseline_runs`), so the gate that follows can fail without raising its repetitions to hundreds.

The wall time of planned work is priced here too, for the design check's plan line and its limit: this
machine's recent runs of the same server, scenario, kind, thread count and durations (the store's
history, as ``dbperf ci plan`` prices its plans: the CLI hands in :mod:`harness.ci.plan_estimate`'s figures,
a layer above this one), else the profile's warm-up + measured seconds + an assumed server start,
labelled as assumed. docs/method.md
("Before the first run") says how they are used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.config.option_table import OPTIONS_BY_NAME
from harness.config.settings import Settings
from harness.judge import design
from harness.judge.baselines import Baseline, record_command
from harness.model import Kind
from harness.pipeline.cases import Case, for_kind, kind_threads
from harness.pipeline.design_check import Planned, baseline_runs, gating_metrics, seconds_per_run, tests_of


def _given_path(settings: Settings, name: str, value: Path) -> list[str]:
    default = OPTIONS_BY_NAME[name].default or ""
    if value == settings.root / default:
        return []
    return [f"--{name}", str(value)]


def carried_flags(settings: Settings) -> list[str]:
    """The flags of ``settings`` a suggested recording must repeat to record what this invocation reads."""
    out: list[str] = []
    if settings.threads is not None:
        out += ["--threads", ",".join(map(str, settings.threads))]
    if settings.time is not None:
        out += ["--time", str(settings.time)]
    if settings.warmup is not None:
        out += ["--warmup", str(settings.warmup)]
    if settings.testbed_class:
        out += ["--testbed-class", settings.testbed_class]
    for name, value in (
        ("servers-dir", settings.servers_dir),
        ("scenarios-dir", settings.scenarios_dir),
        ("baselines-dir", settings.baselines_dir),
    ):
        out += _given_path(settings, name, value)
    if isinstance(settings.store, Path):
        out += _given_path(settings, "store", settings.store)
    return out


def cost_only(settings: Settings, unit: str) -> str:
    """The cheaper way a raised timing design has: cost runs only, which decide small changes in 2-3."""
    instead = " instead of --no-cost" if settings.cost is False else ""
    return f"cost runs only, --cost{instead} (instructions decide small server-cost changes in 3 {unit})"


Lookup = Callable[[Case, Kind, int], "Baseline | None"]


def baseline_plan(
    settings: Settings, cases: Sequence[Case], kinds: Sequence[Kind], lookup: Lookup
) -> list[tuple[Planned, Baseline | None]]:
    """Every comparison a gate of ``cases`` makes against baselines, with the baseline found (or None).

    A missing baseline is planned as it would be recorded: cost runs at the scenario's ``[cost]
    repetitions``, timing at one run (:func:`design_check.baseline_runs` sets the count to suggest).
    The design check itself takes the found ones, with the metrics their files hold.
    """
    out: list[tuple[Planned, Baseline | None]] = []
    for case in cases:
        for kind in kinds:
            c = for_kind(settings, case, kind)
            reps = c.scenario.cost.repetitions if kind == "cost" else c.scenario.repetitions
            for threads in kind_threads(c.scenario, kind):
                found = lookup(c, kind, threads)
                metrics = gating_metrics(c.scenario, c.server, kind)
                if found is not None:
                    metrics = tuple(m for m in metrics if found.values(m))
                n_base = len(found.run_ids) if found is not None else reps if kind == "cost" else 1
                if metrics:
                    label = f"{c.scenario.name} {threads}t {kind}"
                    planned = Planned(label, c.scenario, c.server, kind, "baseline", n_base, reps, metrics)
                    out.append((planned, found))
    return out


Hints = Mapping[tuple[str, str], str]
"""(kind, scenario) -> the recording to suggest; ("time", "") -> the timing recording of every scenario."""


def record_hints(settings: Settings, cases: Sequence[Case], timing_runs: int) -> dict[tuple[str, str], str]:
    """The exact recording each no-baseline verdict suggests: timing with ``timing_runs``, cost at its
    scenario's count, one command per scenario, and one for every scenario's timing baseline at once."""
    out: dict[tuple[str, str], str] = {}
    if not cases:
        return out
    server, profile = cases[0].server.name, cases[0].scenario.profile
    flags = carried_flags(settings)
    for case in cases:
        name = case.scenario.name
        out[("time", name)] = record_command([name], server, profile, kind="time", repetitions=timing_runs, flags=flags)
        out[("cost", name)] = record_command([name], server, profile, kind="cost", flags=flags)
    names = [c.scenario.name for c in cases]
    out[("time", "")] = record_command(names, server, profile, kind="time", repetitions=timing_runs, flags=flags)
    return out


def gate_cheaper(
    settings: Settings, plan: Sequence[tuple[Planned, Baseline | None]], hints: Hints, timing_runs: int
) -> tuple[str, ...]:
    """The cheaper ways a gate whose raised timing runs are over the limit names: cost runs only, and a
    timing baseline of ``timing_runs`` runs where the stored ones have fewer (then a gate needs as many)."""
    out = [cost_only(settings, "runs")] if settings.cost is not True else []
    short = [p for p, found in plan if p.kind == "time" and found is not None and p.n_base < timing_runs]
    if short:
        out.append(
            f"record the timing baseline again with {timing_runs} runs (it has {min(p.n_base for p in short)}), "
            f"after which a gate needs {timing_runs} at most: {hints[('time', '')]}"
        )
    return tuple(out)


RunPrice = Callable[[Case, Kind, int], "tuple[float, str]"]
"""``run(case, kind, threads)``: one run's wall time with the gap to the next, and where it comes from."""


def assumed_run(case: Case, kind: Kind, threads: int) -> tuple[float, str]:
    """One run from the profile alone: warm-up + measured seconds + a server start (cost: its instructions)."""
    del threads
    start = {"local": 1.5, "container": 6.0}.get(case.server.provider, 0.0)
    return seconds_per_run(case.scenario, kind, start_s=start, server=case.server) + 2.0, "assumed"


@dataclass(frozen=True)
class Pricing:
    """How a raised plan is priced: per run (the CLI hands in this machine's stored durations, as ``dbperf
    ci plan`` prices its plans: :mod:`harness.ci.plan_estimate`), per invocation and per A/B comparison."""

    run: RunPrice = assumed_run
    session_s: float = 10.0
    plan_check_s: float = 6.0


def price(
    settings: Settings,
    cases: Sequence[Case],
    repetitions: int,
    kinds: Sequence[Kind],
    pricing: Pricing,
    *,
    comparisons: int = 0,
) -> tuple[float, str]:
    """The wall time of a raised plan: ``repetitions`` timing runs of every case and thread count, the cost
    runs at their own count, the session's fixed overhead and each A/B comparison's query-plan check; and
    where the run figures come from: "measured (N runs)" of this machine's history, or "assumed"."""
    total = pricing.session_s + pricing.plan_check_s * comparisons
    sources: list[str] = []
    for case in cases:
        for kind in kinds:
            if kind == "cost" and case.server.provider == "external":
                continue
            c = for_kind(settings, case, kind)
            count = repetitions if kind == "time" else c.scenario.cost.repetitions
            for threads in kind_threads(c.scenario, kind):
                seconds, source = pricing.run(c, kind, threads)
                total += count * seconds
                sources.append(source)
    measured = [s for s in sources if s != "assumed"]
    if measured and len(measured) == len(sources):
        return total, f"{measured[0]} here"
    if measured:
        return total, "partly assumed from the profile"
    return total, "assumed: warm-up + measured seconds + server start, from the profile"


def too_few(settings: Settings, case: Case, recorded: int) -> list[str]:
    """A note when a gate against ``recorded`` timing runs per thread count needs more candidate runs than
    the baseline has: how many, and the recording after which it needs no more than the baseline's.
    The gate is taken as ``dbperf gate`` runs by default: timing and cost runs in one family."""
    kinds: tuple[Kind, ...] = ("time",) if case.server.provider == "external" else ("time", "cost")
    plan = [p for p, _ in baseline_plan(settings, [case], kinds, lambda *_: None)]
    enough = baseline_runs(plan, settings.alpha, lambda p: p.kind == "time")
    if recorded >= enough:
        return []
    with_recorded = [dataclasses.replace(p, n_base=recorded) if p.kind == "time" else p for p in plan]
    needed = design.repetitions_needed(tests_of(with_recorded), settings.alpha)
    command = record_command(
        [case.scenario.name],
        case.server.name,
        case.scenario.profile,
        kind="time",
        repetitions=enough,
        flags=carried_flags(settings),
    )
    gate_needs = f"{needed} candidate runs" if needed is not None else "more candidate runs than it can run"
    return [
        f"the timing baseline has {recorded} run(s) per thread count: a gate against it needs {gate_needs} to be "
        f"able to find a regression; a baseline of {enough} runs lets it decide with as many: {command}"
    ]
