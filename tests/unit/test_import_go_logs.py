"""The go-tpc and go-ycsb importers against logs written from the tools' format strings (tests/data/go-*/).

The expected figures are the ones printed in the files (quoted beside each assertion), so a parser that
reads a key into the wrong field, or mixes the units, fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.go_logs import DATA, TPC, YCSB, tpc

from harness.errors import LogParseError
from harness.imports.gotpc import parse_go_tpc_log
from harness.imports.goycsb import parse_go_ycsb_log
from harness.imports.oplines import OpLine, go_duration_s, split_reports
from harness.imports.runs import NOPM_LABEL, ImportedRun, import_go_tpc, import_go_ycsb

TPC_TYPES = ["DELIVERY", "NEW_ORDER", "ORDER_STATUS", "PAYMENT", "STOCK_LEVEL"]


def ycsb(name: str) -> list[ImportedRun]:
    return import_go_ycsb([YCSB / name], scenario="ycsb_a", server="tidb-like")


def op(run: ImportedRun, name: str):  # type: ignore[no-untyped-def]
    return next(o for o in run.operations if o.name == name)


# --------------------------------------------------------------------------------------------------
# go-tpc
# --------------------------------------------------------------------------------------------------


def test_go_tpc_clean_run_figures() -> None:
    imported = tpc("tpcc_clean.log")
    run = imported.run
    assert run.ok and run.source == "import" and run.profile == "import"
    assert (run.scenario, run.server, run.threads) == ("tpcc", "tidb-like", 8)
    # tpmC: 3047.8, tpmTotal: 6739.0, efficiency: 5924.9%
    assert imported.nopm == 3047.8
    assert run.options["nopm"] == "3047.8" and run.options["tpm_total"] == "6739.0"
    assert run.options["efficiency_pct"] == "5924.9"
    assert any(NOPM_LABEL in note for note in run.notes)
    assert not any("tpmC:" in note or note.startswith("tpmC") for note in run.notes)
    assert [o.name for o in imported.operations] == TPC_TYPES
    # [Summary] NEW_ORDER - Takes(s): 60.1, Count: 3052, TPM: 3047.8, Sum(ms): 30185.7, Avg(ms): 9.9,
    #   50th(ms): 9.4, 90th(ms): 15.7, 95th(ms): 18.9, 99th(ms): 25.2, 99.9th(ms): 33.6, Max(ms): 41.9
    no = op(imported, "NEW_ORDER")
    assert (no.count, no.errors, no.takes_s) == (3052, 0, 60.1)
    assert no.rate_per_s * 60 == pytest.approx(3047.8)
    assert (no.sum_ms, no.avg_ms, no.p50_ms, no.p90_ms, no.p95_ms, no.p99_ms, no.p999_ms, no.max_ms) == (
        30185.7,
        9.9,
        9.4,
        15.7,
        18.9,
        25.2,
        33.6,
        41.9,
    )
    assert run.totals is not None
    events = sum(o.count for o in imported.operations)
    assert run.totals.events == events and run.totals.time_s == 60.1
    assert run.metrics.tps == pytest.approx(events / 60.1)
    # the mean of the mix is exact (each type's Sum(ms)); its percentiles and QPS are not in the log
    assert run.totals.latency_avg_ms == pytest.approx(sum(o.sum_ms or 0 for o in imported.operations) / events)
    assert run.metrics.qps is None and run.metrics.p95_ms is None
    assert run.metrics.errors_per_s == 0


def test_go_tpc_intervals_add_up_to_the_summary() -> None:
    imported = tpc("tpcc_clean.log")
    intervals = imported.run.intervals
    assert len(intervals) == 6
    assert sum(i.events for i in intervals) == imported.run.totals.events  # type: ignore[union-attr]
    assert [round(i.t_s) for i in intervals] == [10, 20, 30, 40, 50, 60]
    assert all(i.threads_running == 8 and i.errors == 0 for i in intervals)


def test_go_tpc_errors_are_counted_per_type() -> None:
    imported = tpc("tpcc_errors.log", threads=16)
    # [Summary] NEW_ORDER_ERR - Takes(s): 60.0, Count: 121, ...
    assert op(imported, "NEW_ORDER").errors == 121
    assert op(imported, "NEW_ORDER").count == 3779
    assert [o.name for o in imported.operations] == TPC_TYPES  # NAME_ERR folded into NAME
    errors = sum(o.errors for o in imported.operations)
    assert errors == 121 + 106 + 16 + 8 + 6
    run = imported.run
    assert run.totals is not None and run.totals.errors == errors
    assert run.metrics.errors_per_s == pytest.approx(errors / 60.0)
    assert sum(i.errors for i in run.intervals) == errors
    parsed = parse_go_tpc_log((TPC / "tpcc_errors.log").read_text(), "x")
    assert len(parsed.failures) == 2 and "Error 1213" in parsed.failures[0]


def test_go_tpc_older_formats() -> None:
    old = tpc("tpcc_v1.0_2020.log")
    # Sum(ms): 12149, Avg(ms): 9, 90th(ms): 17, 99th(ms): 27, 99.9th(ms): 31 ; "tpmC: 2500.9"
    no = op(old, "NEW_ORDER")
    assert (no.count, no.sum_ms, no.avg_ms, no.p90_ms, no.p99_ms, no.p999_ms) == (1246, 12149, 9, 17, 27, 31)
    assert no.p50_ms is None and no.p95_ms is None and no.max_ms is None
    assert old.nopm == 2500.9 and "tpm_total" not in old.run.options and "efficiency_pct" not in old.run.options
    mid = tpc("tpcc_2021_efficiency.log")
    assert mid.nopm == 2644.3 and mid.run.options["efficiency_pct"] == "5140.5" and "tpm_total" not in mid.run.options


def test_go_tpc_wait_lines_are_skipped() -> None:
    imported = tpc("tpcc_wait.log", threads=40)
    assert imported.nopm == 49.8 and imported.run.options["efficiency_pct"] == "96.8"
    assert len(imported.run.intervals) == 3
    assert [o.name for o in imported.operations] == TPC_TYPES


def test_go_tpc_interrupted_run_is_failed_with_its_intervals() -> None:
    imported = tpc("tpcc_interrupted.log")
    run = imported.run
    assert not run.ok and "no '[Summary]' report" in run.failure
    assert len(run.intervals) == 4 and run.totals is None and imported.operations == ()


def test_import_is_idempotent_and_ids_differ_between_files() -> None:
    assert tpc("tpcc_clean.log").run.run_id == tpc("tpcc_clean.log").run.run_id
    assert tpc("tpcc_clean.log").run.run_id != tpc("tpcc_errors.log").run.run_id


# --------------------------------------------------------------------------------------------------
# go-ycsb
# --------------------------------------------------------------------------------------------------


def test_go_ycsb_run_figures() -> None:
    [imported] = ycsb("ycsb_a_run.log")
    run = imported.run
    assert run.ok and run.scenario == "ycsb_a" and run.threads == 16 and run.script == "go-ycsb run"
    # READ   - Takes(s): 34.1, Count: 125000, OPS: 3667.9, Avg(us): 931, Min(us): 87, Max(us): 6950,
    #   50th(us): 821, 90th(us): 1558, 95th(us): 1867, 99th(us): 2635, 99.9th(us): 3878, 99.99th(us): 5327
    read = op(imported, "READ")
    assert (read.count, read.errors, read.takes_s, read.rate_per_s) == (125000, 0, 34.1, 3667.9)
    assert (read.avg_ms, read.min_ms, read.max_ms) == pytest.approx((0.931, 0.087, 6.950))
    assert (read.p50_ms, read.p90_ms, read.p95_ms, read.p99_ms, read.p999_ms) == pytest.approx(
        (0.821, 1.558, 1.867, 2.635, 3.878)
    )
    assert [o.name for o in imported.operations] == ["READ", "UPDATE"]  # TOTAL is the run's, not a type
    # TOTAL  - Takes(s): 34.1, Count: 250000, ... Avg(us): 1543, Min(us): 97, Max(us): 26076, 50th(us): 1250,
    #   90th(us): 2927, 95th(us): 3644, 99th(us): 5348, 99.9th(us): 7946
    assert run.totals is not None and run.totals.events == 250000 and run.totals.time_s == 34.1
    assert run.metrics.tps == pytest.approx(250000 / 34.1)
    assert (run.metrics.p50_ms, run.metrics.p95_ms, run.metrics.p99_ms, run.metrics.p999_ms) == pytest.approx(
        (1.250, 3.644, 5.348, 7.946)
    )
    assert run.totals.latency_avg_ms == pytest.approx(1.543) and run.totals.latency_max_ms == pytest.approx(26.076)
    assert run.metrics.qps is None
    assert run.options["wall_s"] == "34.228"  # Run finished, takes 34.227975257s
    assert run.options["ycsb.requestdistribution"] == "zipfian"
    assert not any("password" in key or "s3cret" in value for key, value in run.options.items())


def test_go_ycsb_periodic_reports_are_cumulative() -> None:
    [imported] = ycsb("ycsb_a_run.log")
    intervals = imported.run.intervals
    assert [i.t_s for i in intervals] == [10.0, 20.0, 30.0]
    assert all(i.interval_s == 10.0 for i in intervals)
    lines = (YCSB / "ycsb_a_run.log").read_text().splitlines()
    totals = [int(line.split("Count: ")[1].split(",")[0]) for line in lines if line.startswith("TOTAL")]
    # each interval holds that interval's operations only: the differences of the cumulative TOTAL
    assert [i.events for i in intervals] == [totals[0], totals[1] - totals[0], totals[2] - totals[1]]


def test_go_ycsb_load_and_run_phases() -> None:
    load, run = ycsb("ycsb_load_run.log")
    assert (load.run.scenario, load.run.script, load.run.threads) == ("ycsb_a-load", "go-ycsb load", 8)
    assert (run.run.scenario, run.run.script) == ("ycsb_a", "go-ycsb run")
    assert load.run.run_id != run.run.run_id
    assert [o.name for o in load.operations] == ["INSERT"]
    assert op(load, "INSERT").count == 100000  # recordcount
    assert run.run.options["ycsb.measurement.interval"] == "5"
    assert [i.t_s for i in run.run.intervals] == [5.0, 10.0, 15.0, 20.0]


def test_go_ycsb_errors() -> None:
    [imported] = ycsb("ycsb_errors.log")
    # UPDATE_ERROR - Takes(s): 41.0, Count: 498, ...
    assert op(imported, "UPDATE").errors == 498 and op(imported, "READ").errors == 0
    assert imported.run.totals is not None and imported.run.totals.errors == 498
    assert imported.run.metrics.errors_per_s == pytest.approx(498 / 41.0)


def test_go_ycsb_older_format_and_read_modify_write() -> None:
    [imported] = ycsb("ycsb_f_2021.log")
    run = imported.run
    assert run.threads == 4 and run.script == "go-ycsb run"  # no "command" property: dotransactions says
    # READ 80000 (40000 of them inside READ_MODIFY_WRITE), READ_MODIFY_WRITE 40000, UPDATE 40000 (all inside it):
    # stored as READ 40000 and READ_MODIFY_WRITE 40000 of their own, no UPDATE of its own (issue 37)
    assert [(o.name, o.count) for o in imported.operations] == [("READ", 40000), ("READ_MODIFY_WRITE", 40000)]
    assert run.totals is not None and run.totals.events == 80000  # = operationcount
    rmw = op(imported, "READ_MODIFY_WRITE")
    assert rmw.p95_ms is None and rmw.p99_ms == pytest.approx(8.391)
    assert run.metrics.p95_ms is None  # no TOTAL line: the mix's percentiles are not in the log
    # the mean over database calls, like TOTAL: READ Avg(us) 904 x 80000, UPDATE Avg(us) 1476 x 40000
    assert run.totals.latency_avg_ms == pytest.approx((0.904 * 80000 + 1.476 * 40000) / 120000)


def test_go_ycsb_interrupted_run_is_failed_with_its_intervals() -> None:
    [imported] = ycsb("ycsb_interrupted.log")
    assert not imported.run.ok and "no 'Run finished'" in imported.run.failure
    assert len(imported.run.intervals) == 2 and imported.operations == ()


# --------------------------------------------------------------------------------------------------
# Refused: one line naming the file and the line
# --------------------------------------------------------------------------------------------------

SYSBENCH = (DATA / "sysbench" / "oltp_point_select.log").read_text()
TPC_CLEAN = (TPC / "tpcc_clean.log").read_text()
YCSB_RUN = (YCSB / "ycsb_a_run.log").read_text()


def _cut(text: str, lineno: int, keep: int | str) -> str:
    """``text`` with line ``lineno`` cut after ``keep`` characters (or before ``keep``), and nothing after it."""
    lines = text.splitlines()
    line = lines[lineno - 1]
    return "\n".join([*lines[: lineno - 1], line[: line.index(keep) if isinstance(keep, str) else keep]]) + "\n"


def _replace_line(text: str, lineno: int, new: str) -> str:
    lines = text.splitlines()
    lines[lineno - 1] = new
    return "\n".join(lines) + "\n"


TPC_BAD = {
    "empty": ("", 1, "empty log"),
    "garbage": ("hello\nthis is not a benchmark\n", 1, "not go-tpc TPC-C output"),
    "sysbench": (SYSBENCH, 1, "not go-tpc TPC-C output"),
    "go-ycsb": (YCSB_RUN, 1, "go-ycsb output, not go-tpc's: import it with 'dbperf import go-ycsb'"),
    "cut summary line": (_cut(TPC_CLEAN, 41, 60), 41, "missing"),
    "cut mid-number": (_cut(TPC_CLEAN, 3, 37), 3, "is not a number"),
    "cut last figure, no newline": (_cut(TPC_CLEAN, 41, -2)[:-1], 41, "ends in the middle of this line"),
    "old layout cut": (
        _cut((TPC / "tpcc_v1.0_2020.log").read_text(), 18, ", 99th"),
        18,
        "99th(ms) missing after 90th(ms)",
    ),
    "not a number": (
        _replace_line(TPC_CLEAN, 2, TPC_CLEAN.splitlines()[1].replace("Count: ", "Count: x")),
        2,
        "not a number",
    ),
    "unknown figure": (
        _replace_line(TPC_CLEAN, 2, TPC_CLEAN.splitlines()[1].replace("TPM", "QPS")),
        2,
        "unknown figure 'QPS'",
    ),
    "malformed tpmC": (_replace_line(TPC_CLEAN, 45, "tpmC: lots"), 45, "malformed tpmC line"),
    "json figures missing": (
        '[{"Prefix":"[Current] ","Operation":"NEW_ORDER","Takes(s)":"10.0"}]\n',
        1,
        "go-tpc JSON NEW_ORDER has the figures Takes(s): no go-tpc printed these",
    ),
    "go-ycsb json": ('[{"Count":"1","OPS":"0.1","Operation":"READ"}]\n', 1, "go-ycsb output (outputstyle=json)"),
    "table output": ("+---------+\n|  PREFIX   | OPERATION |\n", 2, "--output table"),
    "prepare only": (
        "creating table warehouse\nload to item\nload to warehouse in warehouse 1\nFinished\n",
        4,
        "prepare",
    ),
    "two runs in one file": (TPC_CLEAN + TPC_CLEAN, 45 + 40, "second '[Summary]'"),
}


@pytest.mark.parametrize("case", sorted(TPC_BAD), ids=str)
def test_go_tpc_refuses(case: str, tmp_path: Path) -> None:
    text, lineno, mention = TPC_BAD[case]
    path = tmp_path / "bad.log"
    path.write_text(text)
    with pytest.raises(LogParseError) as caught:
        import_go_tpc([path], scenario="s", server="x", threads=1)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{lineno}: "), message
    assert mention in message


YCSB_BAD = {
    "empty": ("\n\n", 1, "empty log"),
    "garbage": ("hello\nworld\n", 1, "not go-ycsb output"),
    "sysbench": (SYSBENCH, 1, "not go-ycsb output"),
    "go-tpc": (TPC_CLEAN, 1, "go-tpc output, not go-ycsb's: import it with 'dbperf import go-tpc'"),
    "cut report line": (_cut(YCSB_RUN, 33, ", Min(us)"), 33, "Min(us) missing after Avg(us)"),
    "cut last figure, no newline": (_cut(YCSB_RUN, 35, -3)[:-1], 35, "ends in the middle of this line"),
    "figures reordered": (
        _replace_line(
            YCSB_RUN, 33, YCSB_RUN.splitlines()[32].replace("OPS", "XX").replace("Count", "OPS").replace("XX", "Count")
        ),
        33,
        "not in the order",
    ),
    "bad property": (_replace_line(YCSB_RUN, 3, "threadcount=16"), 3, "malformed go-ycsb property"),
    "cut in properties": ("\n".join(YCSB_RUN.splitlines()[:5]) + "\n", 5, "inside a properties block"),
    "bad duration": (_replace_line(YCSB_RUN, 32, "Run finished, takes soon"), 32, "Go duration"),
    "csv measurements": ("operation,timestamp_us,latency_us\nREAD,1700000000000000,812\n", 1, "measurementtype"),
    "json figures missing": (
        '[{"Operation":"READ","Takes(s)":"10.0"}]\n',
        1,
        "go-ycsb JSON 'READ' has the figures Takes(s): no go-ycsb printed these",
    ),
    "go-tpc json": (
        '[{"Operation":"NEW_ORDER","Prefix":"[Summary] ","TPM":"1.0"}]\n',
        1,
        "go-tpc output (--output json)",
    ),
    "properties only": (YCSB_RUN[: YCSB_RUN.index("READ ")], 21, "before any operation"),
}


@pytest.mark.parametrize("case", sorted(YCSB_BAD), ids=str)
def test_go_ycsb_refuses(case: str, tmp_path: Path) -> None:
    text, lineno, mention = YCSB_BAD[case]
    path = tmp_path / "bad.log"
    path.write_text(text)
    with pytest.raises(LogParseError) as caught:
        import_go_ycsb([path], scenario="s", server="x")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{lineno}: "), message
    assert mention in message


def test_one_bad_file_stops_the_batch(tmp_path: Path) -> None:
    bad = tmp_path / "bad.log"
    bad.write_text("nothing here\n")
    with pytest.raises(LogParseError, match=r"bad\.log:1"):
        import_go_tpc([TPC / "tpcc_clean.log", bad], scenario="s", server="x", threads=1)
    with pytest.raises(LogParseError, match=r"missing\.log:0: cannot read"):
        import_go_ycsb([tmp_path / "missing.log"], scenario="s", server="x")


# --------------------------------------------------------------------------------------------------
# Pieces
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("34.227975257s", 34.227975257), ("1m0.5s", 60.5), ("2h3m4s", 7384.0), ("512.3ms", 0.5123), ("0s", 0.0)],
)
def test_go_duration(text: str, seconds: float) -> None:
    assert go_duration_s(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5", "1m 2s", "s1"])
def test_go_duration_refuses(text: str) -> None:
    assert go_duration_s(text) is None


def test_reports_split_where_the_sorted_order_starts_again() -> None:
    names = ["READ", "TOTAL", "UPDATE", "READ", "TOTAL", "UPDATE", "INSERT"]
    lines = [OpLine(lineno=i, name=n, takes_s=1.0, count=1, rate_per_s=1.0) for i, n in enumerate(names)]
    reports = split_reports(lines, str)
    assert [[line.name for line in r] for r in reports] == [
        ["READ", "TOTAL", "UPDATE"],
        ["READ", "TOTAL", "UPDATE"],
        ["INSERT"],
    ]


def test_go_ycsb_phases_of_the_parsed_log() -> None:
    log = parse_go_ycsb_log((YCSB / "ycsb_load_run.log").read_text(), "x")
    assert [p.command for p in log.phases] == ["load", "run"]
    assert [len(p.reports) for p in log.phases] == [2, 4]
    assert log.phases[0].properties["mysql.password"] == "s3cret-do-not-store"  # read, never stored


# --------------------------------------------------------------------------------------------------
# Per-type records (OperationStats), as native runs have them
# --------------------------------------------------------------------------------------------------


def test_operation_stats_of_an_imported_tpcc_run() -> None:
    imported = tpc("tpcc_clean.log")
    stats = {o.type: o for o in imported.run.operations}
    assert sorted(stats) == TPC_TYPES
    new_order = stats["NEW_ORDER"]
    assert (new_order.count, new_order.errors) == (3052, 0)
    assert new_order.seconds == pytest.approx(60.1, abs=0.05)  # Count / TPM: Takes(s) beyond its one decimal
    # the per-type metric native TPC-C runs gate on is the same figure as go-tpc's tpmC (Takes(s) is rounded)
    assert imported.run.metric("NEW_ORDER.ops_per_min") == pytest.approx(3047.8, rel=2e-3)
    assert new_order.avg_ms == pytest.approx(30185.7 / 3052)
    # printed 50th 9.4, 95th 18.9, 99th 25.2: kept to sysbench's bucket width (within 0.9 %)
    assert new_order.p50_ms == pytest.approx(9.4, rel=0.009)
    assert new_order.p95_ms == pytest.approx(18.9, rel=0.009)
    assert new_order.p99_ms == pytest.approx(25.2, rel=0.009)
    assert sum(b.count for b in new_order.histogram) == 3052
    # each type over its own Takes(s) (60.0-60.2 s; the run's is NEW_ORDER's 60.1 s): within their rounding
    assert imported.run.metric("ops_per_s") == pytest.approx(imported.run.metrics.tps, rel=3e-3)


def test_operation_stats_keep_errors_and_leave_unprinted_percentiles_empty() -> None:
    errors = {o.type: o for o in tpc("tpcc_errors.log").run.operations}
    assert errors["NEW_ORDER"].errors == 121 and errors["NEW_ORDER"].errors_per_s == pytest.approx(121 / 60.0, rel=1e-3)
    old = {o.type: o for o in tpc("tpcc_v1.0_2020.log").run.operations}
    # 2020 layout: 90th/99th/99.9th only; a p50 or p95 made of them would be wrong, so there is none
    assert old["NEW_ORDER"].p95_ms is None and old["NEW_ORDER"].p50_ms is None
    assert old["NEW_ORDER"].avg_ms == pytest.approx(12149 / 1246)
    [ycsb_f] = ycsb("ycsb_f_2021.log")
    assert all(o.p99_ms is None for o in ycsb_f.run.operations)
    [ycsb_a] = ycsb("ycsb_a_run.log")
    read = next(o for o in ycsb_a.run.operations if o.type == "READ")
    assert read.p99_ms == pytest.approx(2.635, rel=0.009) and read.ops_per_s == pytest.approx(3667.9)  # OPS as printed


def test_failed_imports_have_no_operation_stats() -> None:
    assert tpc("tpcc_interrupted.log").run.operations == ()
    assert ycsb("ycsb_interrupted.log")[0].run.operations == ()
