"""Thread sweeps whose work per transaction changes with the thread count: flagged, never shown silently.

A transaction of a scenario does the same work whatever the number of clients: the rows it reads, the
handler calls it makes. When a sweep's runs say otherwise (2 cores at 32-64 threads: rows read per
transaction 400 -> 281-374, CPU time per transaction ~1,300 -> 122-623 us), the runs' windows did not
measure a steady state (too few transactions per client, counters that lag the window), and their
numbers at those thread counts are not comparable with the others'. :func:`sweep_notes` names each such
scenario, server and metric with the values by thread count; every report adds them to its warnings.

The limits (:data:`LIMITS`, each metric's ``sweep_limit`` in :mod:`harness.model.metrics`): counts a
transaction fixes (rows read, handler reads and writes) may move 5 %; CPU time per transaction, which
contention may raise, 30 %.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence

from harness.model import RunResult, metrics
from harness.model.metrics import CATALOGUE
from harness.model.work import WORK
from harness.report.tables import fmt_value

#: Each flagged metric's limit, in catalogue order (the catalogue's ``sweep_limit``).
LIMITS: dict[str, float] = {m.name: m.sweep_limit for m in CATALOGUE if m.sweep_limit is not None}


def _value(run: RunResult, metric: str) -> float | None:
    if metric in WORK:
        return run.metrics.work.get(metric)
    value = run.metric(metric)
    return float(value) if value is not None else None


def sweep_notes(runs: Sequence[RunResult]) -> list[str]:
    """One sentence per (scenario, server, kind, metric) whose median per transaction at some thread count
    differs from the lowest thread count's by more than its limit."""
    groups: dict[tuple[str, str, str], dict[int, list[RunResult]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.ok:
            groups[(run.scenario, run.server, run.kind)][run.threads].append(run)
    notes = []
    for (scenario, server, kind), by_threads in sorted(groups.items()):
        if len(by_threads) < 2:
            continue
        for metric, limit in LIMITS.items():
            medians: dict[int, float] = {}
            for threads, group in sorted(by_threads.items()):
                values = [v for r in group if (v := _value(r, metric)) is not None]
                if values:
                    medians[threads] = statistics.median(values)
            if len(medians) < 2:
                continue
            first = min(medians)
            reference = medians[first]
            if reference <= 0:
                continue
            moved = {t: v for t, v in medians.items() if abs(v / reference - 1.0) > limit}
            if not moved:
                continue
            shown = ", ".join(f"{fmt_value(v)} at {t}" for t, v in sorted(medians.items()))
            worst = max(moved, key=lambda t: abs(medians[t] / reference - 1.0))
            change = (medians[worst] / reference - 1.0) * 100.0
            notes.append(
                f"{scenario} on {server} ({kind} runs): {metrics.label(metric)} changes with the thread count ({shown} "
                f"threads; {change:+.0f} % at {worst}, beyond {limit * 100:g} %): a transaction's work does not "
                f"depend on the clients, so the runs at {', '.join(str(t) for t in sorted(moved))} threads did not "
                "measure a steady window (longer --time, or fewer threads per core); compare them with care"
            )
    return notes
