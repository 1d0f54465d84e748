"""Change points of stored series: E-divisive means over each series of per-commit medians."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from harness.judge.changepoints import detect_change_points
from harness.model.history import ChangeMark
from harness.model.metrics import TREND_METRICS


def change_marks(
    points: pa.Table,
    metrics: Sequence[str] = TREND_METRICS,
    *,
    alpha: float = 0.01,
    permutations: int = 199,
    min_size: int = 3,
    seed: int = 0,
) -> tuple[ChangeMark, ...]:
    """Change points of every series in ``points`` (as built by :func:`commit_points`)."""
    if points.num_rows == 0:
        return ()
    series = points.column("series").to_numpy()
    starts = np.flatnonzero(np.r_[True, series[1:] != series[:-1]])
    ends = np.r_[starts[1:], series.size]
    scenario = points.column("scenario").to_pylist()
    server = points.column("server").to_pylist()
    threads = points.column("threads").to_pylist()
    at = points.column("at").to_pylist()
    point = points.column("point").to_pylist()
    names = set(points.column_names)
    testbed = points.column("testbed").to_pylist() if "testbed" in names else [""] * points.num_rows
    line = points.column("line").to_pylist() if "line" in names else server
    marks: list[ChangeMark] = []
    for metric in metrics:
        values = points.column(metric).to_numpy(zero_copy_only=False).astype(np.float64)
        for start, end in zip((int(i) for i in starts), (int(i) for i in ends), strict=True):
            chunk = values[start:end]
            keep = np.flatnonzero(np.isfinite(chunk))
            if keep.size < 2 * min_size:
                continue
            found = detect_change_points(
                chunk[keep], alpha=alpha, permutations=permutations, min_size=min_size, seed=seed
            )
            for cp in found:
                row = start + int(keep[cp.index])
                marks.append(
                    ChangeMark(
                        scenario=scenario[row],
                        server=server[row],
                        threads=int(threads[row]),
                        metric=metric,
                        index=cp.index,
                        at=at[row],
                        point=point[row],
                        before=cp.before_mean,
                        after=cp.after_mean,
                        change_pct=cp.change_pct,
                        p_value=cp.p_value,
                        confidence=cp.confidence,
                        series_length=int(keep.size),
                        testbed=testbed[row] or "",
                        line=line[row] or "",
                    )
                )
    marks.sort(key=lambda m: (m.scenario, m.server, m.threads, m.testbed, m.metric, m.index))
    return tuple(marks)
