"""History records: the aggregated series the trend site draws, and the change points found in them."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from harness.model import metrics
from harness.model.server import variables_text

# -- runs that are not the committed configuration --------------------------------------------------
#
# A run measured from a working tree with uncommitted changes, or with server variables set for one
# invocation (``dbperf compare --head-var``), is not a point of its commit's or server's history. Its
# notes say so, in a line that starts with the label the trend site shows for it; the site draws such
# runs apart (faint, with their own legend entry) and change-point detection never sees them.

UNCOMMITTED_TREE = "uncommitted tree"
ONE_OFF = "one-off"
_LABEL_END = " — "


def uncommitted_note(git_sha: str) -> str:
    """The note of a run measured from a working tree with changes not committed to ``git_sha``."""
    commit = f"commit {git_sha[:10]}" if git_sha else "the commit"
    return (
        f"{UNCOMMITTED_TREE}{_LABEL_END}the working tree had changes beyond {commit} (git status): "
        "the trend site draws these runs apart from the commit's series"
    )


def one_off_note(variables: Mapping[str, str]) -> str:
    """The note of a run whose server had variables set for this invocation only (``--head-var``)."""
    return (
        f"{ONE_OFF}: {variables_text(variables)}{_LABEL_END}server variables set for this invocation only "
        "(--head-var), in no server file: the trend site draws these runs apart from the server's series"
    )


def one_off_label(notes: str | tuple[str, ...] | None) -> str:
    """What sets a run apart from its series, from its notes (a tuple, or the store's JSON list text):
    ``one-off: innodb_flush_log_at_trx_commit=1``, ``uncommitted tree``, both joined by `` · ``, or ""
    for a run of the committed configuration."""
    if isinstance(notes, str):
        try:
            loaded = json.loads(notes)
        except ValueError:
            return ""
        notes = tuple(str(n) for n in loaded) if isinstance(loaded, list) else ()
    labels = [
        note.partition(_LABEL_END)[0]
        for note in notes or ()
        if _LABEL_END in note and (note.startswith(f"{ONE_OFF}: ") or note.startswith(UNCOMMITTED_TREE + _LABEL_END))
    ]
    return " · ".join(dict.fromkeys(labels))


def _fmt(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


@dataclass(frozen=True)
class ChangeMark:
    """A change point of one series, located at the commit where the new level starts."""

    scenario: str
    server: str
    threads: int
    metric: str
    index: int
    at: str
    point: str
    before: float
    after: float
    change_pct: float
    p_value: float
    confidence: float
    series_length: int
    testbed: str = ""  # the series' testbed label (harness.store.trend_queries)
    line: str = ""  # what the charts colour the series by: the server, with the testbed when several

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict (non-finite numbers become None, so the JSON stays valid)."""
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}

    def describe(self) -> str:
        unit = " ms" if metrics.unit(self.metric) == "ms" else ""
        where = f" on {self.testbed}" if self.testbed else ""
        return (
            f"{self.scenario} {self.server}{where} {self.threads}t {metrics.label(self.metric)}: "
            f"{_fmt(self.before)}{unit} -> {_fmt(self.after)}{unit} ({self.change_pct:+.1f} %) at point "
            f"{self.index + 1}/{self.series_length} ({self.point}, {self.at}); "
            f"p = {self.p_value:.3f}, confidence {self.confidence * 100:.1f} %"
        )


@dataclass(frozen=True)
class SeriesChanges:
    """One stored series (server x scenario x profile x kind x thread count) and its change points."""

    server: str
    scenario: str
    profile: str
    kind: str
    threads: int
    points: int  # commits (or days, for runs without a git sha) in the series
    changes: tuple[ChangeMark, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "server": self.server, "scenario": self.scenario, "profile": self.profile, "kind": self.kind,
            "threads": self.threads, "points": self.points, "changes": [m.as_dict() for m in self.changes],
        }  # fmt: skip


@dataclass(frozen=True)
class TrendData:
    """Everything the site draws, as Arrow tables plus the change points."""

    runs: int
    points: pa.Table
    versions: pa.Table
    scaling: pa.Table
    changes: tuple[ChangeMark, ...]
    time_extents: dict[str, list[int]]
    #: the work vector of cost runs per commit, long form (harness.store.trend_work.work_points)
    work: pa.Table = field(default_factory=lambda: pa.table({"scenario": pa.array([], pa.string())}))

    @property
    def scenarios(self) -> list[str]:
        return sorted(set(self.points.column("scenario").to_pylist()))

    @property
    def servers(self) -> list[str]:
        return sorted(set(self.points.column("server").to_pylist()))

    @property
    def threads(self) -> list[int]:
        return sorted(set(self.points.column("threads").to_pylist()))

    def measured(self, metric: str, scenario: str | None = None, threads: int | None = None) -> bool:
        """Whether any stored point has ``metric`` (in this scenario, at this thread count): a chart of a
        metric nobody measured would be empty axes, and is never drawn."""
        table = self.points
        if metric not in table.column_names:
            return False
        if scenario is not None:
            table = table.filter(pc.equal(table.column("scenario"), scenario))
        if threads is not None:
            table = table.filter(pc.equal(table.column("threads"), threads))
        return bool(table.num_rows > 0 and table.column(metric).null_count < table.num_rows)

    def default_threads(self, scenario: str | None = None, metric: str | None = None) -> int:
        """The thread count with the most commits (ties: the highest), optionally within a scenario and
        among the points that measured ``metric``."""
        table = self.points
        if scenario is not None:
            table = table.filter(pc.equal(table.column("scenario"), scenario))
        if metric is not None and metric in table.column_names:
            table = table.filter(pc.is_valid(table.column(metric)))
        counts = table.group_by("threads").aggregate([("threads", "count")]).to_pylist()
        if not counts:
            return 1
        best = max(counts, key=lambda r: (r["threads_count"], r["threads"]))
        return int(best["threads"])
