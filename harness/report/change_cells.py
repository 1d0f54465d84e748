"""How every report writes a metric's change and its interval (terminal, Markdown, comment, check run, charts).

* **Counts per transaction** (the work vector) are tested on the count plus an offset, so that 0 -> a
  little does not become an infinite change (docs/work-vector.md). Reports never show that sum's change:
  they show the count's own, from :meth:`~harness.model.MetricVerdict.shown_change`, in % of the base,
  or per transaction (``+1.00 /txn``) where the base is below the count's floor
  (0, or 0.009 -> 1 fsync/txn: never ``+11011.9 %``). The offset stays in the verdict's reason.
* **Intervals** carry their real level: a column is headed with the level most of its rows have
  (:func:`ci_header`, normally ``95 % CI``), and a row at another level says it in brackets: less when
  the repetitions allow no more, ``99.9 %`` where the judge widened it to the confidence the family
  needs (:func:`harness.judge.gate.decide`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from harness.model import MetricVerdict
from harness.report.tables import fmt_value

DEFAULT_LEVEL = 0.95


def fmt_pct(value: float | None, digits: int = 1) -> str:
    """A signed percentage such as ``+4.2 %`` (``-`` when unknown; never ``-0.0``)."""
    if value is None or not math.isfinite(value):
        return "-"
    rounded = round(value, digits) + 0.0
    return f"{rounded:+.{digits}f} %"


def fmt_interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """A confidence interval of a change in percent, such as ``[+1.0, +9.3] %``."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "-"
    lo, hi = round(low, digits) + 0.0, round(high, digits) + 0.0
    return f"[{lo:+.{digits}f}, {hi:+.{digits}f}] %"


def _signed(value: float) -> str:
    text = fmt_value(float(f"{abs(value):.3g}"))  # 0.99999 (a rescaled +40 % of 2.5) reads 1.00
    return f"{'-' if value < 0 and text.strip('0.,') else '+'}{text}"


def fmt_per_txn(value: float | None) -> str:
    """A signed change per transaction such as ``+1.00 /txn`` (about three significant digits, no exponent)."""
    if value is None or not math.isfinite(value):
        return "-"
    return f"{_signed(value)} /txn"


def fmt_level(level: float) -> str:
    """A confidence level in percent with as many digits as it needs not to read 100: ``95 %``, ``99.9 %``."""
    for digits in (3, 4, 5, 6):
        text = f"{level * 100:.{digits}g}"
        if text != "100":
            return f"{text} %"
    return f"{level * 100:.8g} %"


def fmt_change(mv: MetricVerdict) -> str:
    """The change column: ``+4.2 %``, or ``+1.00 /txn`` for a count whose base is below its floor."""
    shown = mv.shown_change()
    return fmt_per_txn(shown.value) if shown.unit == "/txn" else fmt_pct(shown.value)


def _same(a: float, b: float) -> bool:
    return abs(a - b) < 5e-7


def common_level(mvs: Iterable[MetricVerdict]) -> float:
    """The level most intervals have (95 % when none has one, or on a tie with it)."""
    counts = Counter(round(level, 6) for mv in mvs if (level := mv.interval_level()) is not None)
    if not counts:
        return DEFAULT_LEVEL
    top = max(counts.values())
    return DEFAULT_LEVEL if counts.get(DEFAULT_LEVEL) == top else max(counts, key=lambda k: (counts[k], k))


def ci_header(mvs: Iterable[MetricVerdict]) -> str:
    """``95 % CI``, or the level most of the column's rows have."""
    return f"{fmt_level(common_level(mvs))} CI"


def fmt_ci(mv: MetricVerdict, level: float = DEFAULT_LEVEL) -> str:
    """The interval in the change's unit, with its own level in brackets when it is not ``level`` (the
    column's: see :func:`ci_header`)."""
    shown = mv.shown_change()
    if shown.unit == "/txn":
        low, high = shown.low, shown.high
        ok = low is not None and high is not None and math.isfinite(low) and math.isfinite(high)
        text = f"[{_signed(low)}, {_signed(high)}] /txn" if low is not None and high is not None and ok else "-"
    else:
        text = fmt_interval(shown.low, shown.high)
    own = mv.interval_level()
    if text != "-" and own is not None and not _same(own, level):
        text += f" ({fmt_level(own)})"
    return text
