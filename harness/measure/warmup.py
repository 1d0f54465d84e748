"""Is the measured window still warming up? A trend test on the per-second throughput of one run.

A fixed warm-up can be too short: after a fresh start the buffer pool fills, the adaptive hash index
builds and the OS page cache settles, and under load QPS may still be climbing inside the measured
window. A measured window should be flat; so after every timing
run the measured intervals are tested for a monotone trend with Kendall's tau (Mann 1945; Kendall
1975) and its size estimated with the Theil-Sen slope (Sen 1968). A significant trend larger than
:data:`MAX_DRIFT` across the window is a note on the run (shown in every report), and the next
repetitions of that scenario x threads get a longer warm-up (:func:`next_warmup`), on both sides of
an A/B comparison alike.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats as sp_stats

from harness.model import IntervalSample

MAX_DRIFT = 0.10
"""A measured window whose throughput moves more than this (fraction) from start to end is trending."""
ALPHA = 0.05
"""Significance of the trend test (a note and a longer warm-up, not a verdict)."""
MIN_INTERVALS = 5
"""Fewer measured intervals than this are not tested (no power, and nothing to adapt)."""
MAX_FACTOR = 4
"""The warm-up grows at most to this multiple of the profile's."""


@dataclass(frozen=True)
class Trend:
    """A significant trend of the measured window's QPS: its size across the window and its p-value."""

    change: float  # relative change from the first to the last measured second (0.25 = +25 %)
    p_value: float
    intervals: int

    @property
    def rising(self) -> bool:
        return self.change > 0

    def describe(self) -> str:
        what = "still warming up" if self.rising else "slowing down"
        return (
            f"QPS {what} inside the measured window: {self.change * 100:+.0f} % from the first to the last of "
            f"{self.intervals} seconds (Kendall trend test p = {self.p_value:.2g})"
        )


def trend(intervals: Sequence[IntervalSample]) -> Trend | None:
    """The significant trend of the measured (non-warm-up) intervals' QPS, or None."""
    measured = [s.qps for s in intervals if not s.warmup and s.interval_s > 0]
    if len(measured) < MIN_INTERVALS:
        return None
    level = statistics.median(measured)
    if level <= 0:
        return None
    x = list(range(len(measured)))
    tau = sp_stats.kendalltau(x, measured)
    p = float(tau.pvalue)
    if not math.isfinite(p) or p >= ALPHA:
        return None
    slope = float(sp_stats.theilslopes(measured, x).slope)
    change = slope * (len(measured) - 1) / level
    if abs(change) <= MAX_DRIFT:
        return None
    return Trend(change, p, len(measured))


def next_warmup(current_s: int, profile_s: int, found: Trend | None) -> int:
    """The warm-up for the next repetition: doubled after a rising trend, up to MAX_FACTOR x the profile's."""
    if found is None or not found.rising:
        return current_s
    return min(max(1, current_s * 2), max(1, profile_s) * MAX_FACTOR, current_s + 60)
