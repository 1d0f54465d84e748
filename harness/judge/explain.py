"""Where the instructions went: the functions whose cost per transaction changed between two sides.

Each cost run keeps its profile (every function's self instructions under statement dispatch). Per
side, a function's cost is the median over the runs of its self instructions divided by the run's
transactions; the change is head minus base. Functions are keyed by name without their parameter
list, so an overload whose signature changed between two versions still lines up with itself.
Functions a stripped binary does not name are named by their binary and size where a local server's
unwind table covers them (``[mariadbd, 524 bytes]``: :func:`harness.measure.cost_dump.name_by_extent`);
those still named by address (``0x...``: container binaries) are summed into one line, because their
addresses mean nothing across two builds (docs/reports.md, "Functions without symbols"). Each change's
``share`` is its part of all the movement (the sum of every function's absolute change), so the report
can say how much of it is unnamed.
With debug symbols installed (``/usr/lib/debug/.build-id``) valgrind names them itself.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence

from harness.model import FunctionDelta, RunResult

UNNAMED = "(unnamed functions)"
TOP = 8
"""Functions listed in an explanation (the largest changes, either way)."""
KEEP_SHARE = 0.001
"""A cost baseline keeps the functions holding at least this share of the instructions."""


def key(name: str) -> str:
    """A function's name without its parameter list (``0x...`` addresses become the unnamed line)."""
    if name.startswith("0x"):
        return UNNAMED
    return name.split("(", 1)[0] if "(" in name and not name.startswith("(") else name


def per_transaction(runs: Sequence[RunResult]) -> dict[str, float]:
    """Median self instructions per transaction of every function over ``runs`` (unnamed ones summed)."""
    samples: dict[str, list[float]] = defaultdict(list)
    counted = 0
    for run in runs:
        profile, totals = run.cost_profile, run.totals
        if profile is None or totals is None or totals.events < 1:
            continue
        counted += 1
        one: dict[str, float] = defaultdict(float)
        for fn in profile.functions:
            one[key(fn.name)] += fn.self_ir / totals.events
        for name, value in one.items():
            samples[name].append(value)
    if counted == 0:
        return {}
    return {name: statistics.median([*values, *[0.0] * (counted - len(values))]) for name, values in samples.items()}


def trimmed(costs: Mapping[str, float]) -> dict[str, float]:
    """The functions worth keeping in a baseline file (the rest is a rounding error of the total)."""
    total = sum(costs.values()) or 1.0
    return {name: round(value, 2) for name, value in costs.items() if value >= KEEP_SHARE * total}


def explain(base: Mapping[str, float], head: Mapping[str, float], top: int = TOP) -> tuple[FunctionDelta, ...]:
    """The functions whose instructions per transaction changed most, largest first, the unnamed line last.

    ``share`` is each change as a (signed) fraction of all the movement: the sum of every function's
    absolute change per transaction.
    """
    if not base or not head:
        return ()
    deltas = [
        FunctionDelta(name, base.get(name, 0.0), head.get(name, 0.0), head.get(name, 0.0) - base.get(name, 0.0), 0.0)
        for name in set(base) | set(head)
    ]
    total = sum(abs(d.delta) for d in deltas)
    named = sorted((d for d in deltas if d.name != UNNAMED), key=lambda d: (-abs(d.delta), d.name))[:top]
    unnamed = [d for d in deltas if d.name == UNNAMED]
    return tuple(
        FunctionDelta(d.name, d.base, d.head, d.delta, d.delta / total if total else 0.0) for d in (*named, *unnamed)
    )
