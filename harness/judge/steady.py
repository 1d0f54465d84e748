"""Whether a timing run's measured window was long enough to be a steady state for its latency.

A closed-loop client finishes about ``window / latency`` transactions in the measured window. When the
window is shorter than :data:`STEADY_FACTOR` times the run's p95, a slow transaction is one of a handful
per client, and the queue the warm-up left behind has not settled: a transient that decays over about
one response time falls below 1 % of itself only after five (e^-5 = 0.7 %), so the window's p95 describes
that transient, not the server. Such a run is flagged as not steady, and the latency verdicts of its
comparison (p50, p95, p99, per-operation latencies, and capacity at the SLO when its figures rest on such
a run) are INCONCLUSIVE with that reason instead of decided on it (docs/reports.md, "Steady windows").
QPS and CPU are still judged; the warnings name the runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from harness.model import MetricVerdict, RunResult, Verdict
from harness.model.verdict import UNSTEADY

#: A window shorter than this many times the run's p95 is not a steady state (see the module docstring).
STEADY_FACTOR = 5.0

#: The cause a latency verdict held back by an unsteady window carries (one place: harness.model.verdict).
CAUSE = UNSTEADY


def window_s(run: RunResult) -> float | None:
    """The measured window in seconds: what sysbench reported for it, else the scenario's duration."""
    if run.totals is not None and run.totals.time_s > 0:
        return float(run.totals.time_s)
    return float(run.time_s) if run.time_s > 0 else None


def unsteady(run: RunResult) -> bool:
    """Whether the run's window was shorter than :data:`STEADY_FACTOR` x its p95."""
    window, p95 = window_s(run), run.metrics.p95_ms
    return run.ok and window is not None and p95 is not None and window * 1000.0 < STEADY_FACTOR * p95


def _range(values: Sequence[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.3g}" if f"{lo:.3g}" == f"{hi:.3g}" else f"{lo:.3g}-{hi:.3g}"


def note(runs: Sequence[RunResult], side: str) -> str:
    """The warning for one side's runs, or "" when every window was steady: how many runs, their window
    and p95, and the transactions per client that allowed."""
    short = [r for r in runs if unsteady(r)]
    if not short:
        return ""
    windows = [w for r in short if (w := window_s(r)) is not None]
    p95s = [r.metrics.p95_ms / 1000.0 for r in short if r.metrics.p95_ms is not None]
    per_client = [w / p for w, p in zip(windows, p95s, strict=True) if p > 0]
    return (
        f"{side}: not a steady state in {len(short)} of {len(runs)} run(s): the measured window "
        f"({_range(windows)} s) was shorter than {STEADY_FACTOR:g} x its p95 ({_range(p95s)} s), "
        f"{_range(per_client)} p95-long transactions per client; latency is not judged on it "
        f"(a longer --time decides it)"
    )


def is_latency(metric: str) -> bool:
    """p50, p95, p99, p99.9 and per-operation latencies (``READ.p99_ms``)."""
    return metric.endswith("_ms")


def held(mv: MetricVerdict, reason: str) -> MetricVerdict:
    """A latency verdict not decided: INCONCLUSIVE, its cause :data:`CAUSE`, the window's note as the reason
    (the test's numbers stay, for the record). Capacity at the SLO is a latency figure too: a sweep's
    verdict is held when its figures rest on such a run (:meth:`harness.judge.capacity.SweepComparison.
    unsteady_reason`)."""
    latency = is_latency(mv.metric) or mv.metric.startswith("capacity_")
    if not latency or mv.outcome in ("failed", "no_baseline"):
        return mv
    return replace(
        mv,
        outcome="inconclusive",
        cause=CAUSE,
        reason=f"Not decided: {reason}. The test alone said: {mv.reason}",
        summary=f"window < {STEADY_FACTOR:g} x p95: not steady",
        repetitions_needed=None,
        seconds_needed=None,
    )


def hold(verdicts: Sequence[Verdict], notes: Mapping[int, str]) -> list[Verdict]:
    """The verdicts with the latency metrics of those whose index has a note held back (:func:`held`)."""
    return [
        replace(v, metrics=tuple(held(m, notes[i]) for m in v.metrics)) if notes.get(i) else v
        for i, v in enumerate(verdicts)
    ]
