"""Trend aggregates never mix machines: one series per testbed, labelled only when there are several."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
from support.factories import TESTBED, run

from harness.judge.changepoint_series import change_marks
from harness.model import RunResult
from harness.pipeline import history
from harness.report.charts import Selection, dashboard_spec
from harness.store import trend_queries as trends
from harness.store.rows import arrow_tables
from harness.store.schema import METRIC_COLUMNS, METRICS_TABLE_KEYS
from harness.store.trend_queries import commit_points

OTHER = dataclasses.replace(TESTBED, cpu_model="Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", cores=8)


def _table(runs: list[RunResult]) -> pa.Table:
    return arrow_tables(runs)["runs"].select([*METRICS_TABLE_KEYS, *METRIC_COLUMNS])


def _series(*, qps: float, testbed: object, commits: int = 12, step_at: int | None = None) -> list[RunResult]:
    out = []
    for c in range(commits):
        level = qps * (0.8 if step_at is not None and c >= step_at else 1.0)
        for rep in range(3):
            base = run(level * (1 + 0.001 * rep))
            out.append(
                dataclasses.replace(
                    base,
                    run_id=f"{qps:.0f}-{c}-{rep}",
                    testbed=testbed,
                    git_sha=f"{c:040x}",
                    started_at=base.started_at.replace(day=1 + c),
                    finished_at=base.finished_at.replace(day=1 + c),
                )
            )
    return out


def test_labels_are_short_and_unique() -> None:
    assert (
        trends.testbed_label("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", 8, "abcdef123456", None)
        == "Intel Xeon Gold 6338 x8 (abcdef)"
    )
    assert trends.testbed_label("AMD EPYC 7763 64-Core Processor", 16, "0123456789", "") == "AMD EPYC 7763 x16 (012345)"
    assert trends.testbed_label(None, None, None, None) == "unknown CPU x? (unknow)"
    # a hardware class (a fleet's runner label) names the testbed
    assert trends.testbed_label("AMD EPYC 7763 64-Core Processor", 16, "0123456789", "epyc-16") == "epyc-16 (012345)"


def test_two_testbeds_are_two_series_never_averaged() -> None:
    table = _table(_series(qps=1000.0, testbed=TESTBED) + _series(qps=3000.0, testbed=OTHER, step_at=6))
    points = commit_points(table).to_pylist()
    assert len(points) == 24
    assert {round(p["qps"], -1) for p in points} == {1000.0, 3000.0, 2400.0}  # no 2000: never a mean of both
    assert len({p["series"] for p in points}) == 2
    lines = {p["line"] for p in points}
    assert lines == {
        f"mariadb-local · {trends.testbed_label(t.cpu_model, t.cores, t.fingerprint, None)}" for t in (TESTBED, OTHER)
    }
    marks = change_marks(commit_points(table))
    assert [
        (m.metric, m.testbed.startswith("Intel Xeon Gold 6338 x8"), m.index) for m in marks if m.metric == "qps"
    ] == [("qps", True, 6)]
    assert "on Intel Xeon Gold 6338 x8" in marks[0].describe()


def test_one_testbed_keeps_the_plain_server_name() -> None:
    data = history(_table(_series(qps=1000.0, testbed=TESTBED)))
    assert set(data.points.column("line").to_pylist()) == {"mariadb-local"}
    assert set(data.versions.column("line").to_pylist()) == {"mariadb-local"}
    assert set(data.scaling.column("line").to_pylist()) == {"mariadb-local"}


def test_charts_colour_by_server_and_testbed() -> None:
    data = history(_table(_series(qps=1000.0, testbed=TESTBED) + _series(qps=3000.0, testbed=OTHER)))
    spec = dashboard_spec(data, Selection("oltp_point_select", 8), validate=True)
    text = str(spec)
    assert "'field': 'line'" in text
    assert "'field': 'testbed'" in text  # tooltips name the testbed
    assert len({row["line"] for row in spec["datasets"]["versions"]}) == 2
    assert len({row["line"] for row in spec["datasets"]["scaling"]}) == 2


def test_two_hardware_classes_on_look_alike_machines_are_two_series() -> None:
    """The same machine under two runner labels (classes): two testbeds, each named by its class."""
    a, b = (dataclasses.replace(TESTBED, hardware_class=c) for c in ("dbperf-a", "dbperf-b"))
    assert len({TESTBED.fingerprint, a.fingerprint, b.fingerprint}) == 3
    assert dataclasses.replace(TESTBED, hardware_class="").fingerprint == TESTBED.fingerprint  # unchanged without
    points = commit_points(_table(_series(qps=1000.0, testbed=a) + _series(qps=1100.0, testbed=b))).to_pylist()
    assert {p["line"] for p in points} == {
        f"mariadb-local · dbperf-a ({a.fingerprint[:6]})",
        f"mariadb-local · dbperf-b ({b.fingerprint[:6]})",
    }
