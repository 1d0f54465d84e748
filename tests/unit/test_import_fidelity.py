"""Imports keep what the tool printed, under the tool's definition (issue 37, item 2).

- go-ycsb's READ_MODIFY_WRITE is one operation: its READ and UPDATE, which go-ycsb counts too, are
  never added again (the 2021 workload F log gave ops_per_s 5,860.8 for a tps of 2,930.4);
- each type's rate is the tool's own (go-tpc's TPM, go-ycsb's OPS: count over the type's Takes(s));
- every printed line is kept verbatim (``printed.<OPERATION>``) and every printed percentile is in a
  note, with the tool's histogram resolution, also for layouts without a 50th and 95th;
- a go-ycsb run whose properties differ from the dbperf workload it is stored under says so, naming both;
- ``--output json`` / ``outputstyle=json`` logs are read, and give the same runs as the plain logs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.go_logs import TPC, YCSB, tpc

from harness.imports.gotpc import TPC_LAYOUTS
from harness.imports.goycsb import YCSB_LAYOUTS
from harness.imports.runs import import_go_tpc, import_go_ycsb
from harness.imports.ycsb_reference import DBPERF_YCSB, property_mismatch

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
_PLAIN = re.compile(r"^(?P<prefix>\[(?:Current|Summary)\] )?(?P<name>[A-Z][A-Z0-9_]*)\s* - (?P<body>Takes\(s\): .*)$")


def test_workload_f_counts_each_read_modify_write_once() -> None:
    [f] = import_go_ycsb([YCSB / "ycsb_f_2021.log"], scenario="ycsb_f", server="x")
    doc = f.run.summary_dict()
    # READ 80000 / RMW 40000 / UPDATE 40000 printed over 27.3 s; 80000 operations (operationcount)
    assert doc["tps"] == pytest.approx(80000 / 27.3)
    assert doc["ops_per_s"] == pytest.approx(doc["tps"], rel=2e-3)  # was twice tps (OPS and Takes(s) are rounded)
    shares = {o["type"]: o["count"] for o in doc["operations"]}  # type: ignore[union-attr]
    assert shares == {"READ": 40000, "READ_MODIFY_WRITE": 40000}
    assert f.run.options["printed.READ"].startswith("Takes(s): 27.3, Count: 80000, OPS: 2933.8, Avg(us): 904")
    assert f.run.options["printed.UPDATE"].endswith("99.9th(us): 6022, 99.99th(us): 7907")
    nested = next(n for n in f.run.notes if "inside each of the 40,000 READ_MODIFY_WRITEs" in n)
    assert "READ 80,000 -> 40,000" in nested and "UPDATE 40,000 -> 0" in nested


def test_every_printed_percentile_is_kept_with_the_resolution() -> None:
    [f] = import_go_ycsb([YCSB / "ycsb_f_2021.log"], scenario="ycsb_f", server="x")
    note = next(n for n in f.run.notes if n.startswith("percentiles as go-ycsb printed them"))
    # 99th(us): 2550, 99.9th(us): 3650, 99.99th(us): 4835 (no 50th/95th in the 2021 layout)
    assert "READ p99 2.55 ms, p99.9 3.65 ms, p99.99 4.835 ms, max 6.596 ms" in note
    assert "3 significant figures" in note
    old = tpc("tpcc_v1.0_2020.log")
    note = next(n for n in old.run.notes if n.startswith("percentiles as go-tpc printed them"))
    line = old.run.options["printed.NEW_ORDER"]
    p90, p99, p999 = (re.search(rf"{k}\(ms\): (\S+?)(?:,|$)", line)[1] for k in ("90th", "99th", r"99\.9th"))  # type: ignore[index]
    assert f"NEW_ORDER p90 {float(p90):g} ms, p99 {float(p99):g} ms, p99.9 {float(p999):g} ms" in note
    assert "one significant figure and a 1 ms floor" in note


def test_each_type_keeps_the_tools_own_rate() -> None:
    run = tpc("tpcc_clean.log").run
    for stats in run.operations:
        tpm = float(re.search(r"TPM: (\S+),", run.options[f"printed.{stats.type}"])[1])  # type: ignore[index]
        assert stats.ops_per_min == pytest.approx(tpm), stats.type  # TPM as printed, not count / rounded Takes(s)


def test_a_go_ycsb_workload_other_than_the_scenario_is_named(tmp_path: Path) -> None:
    text = (
        (YCSB / "ycsb_a_run.log")
        .read_text()
        .replace('"requestdistribution"="zipfian"', '"requestdistribution"="uniform"')
    )
    path = tmp_path / "uniform.log"
    path.write_text(text)
    [a] = import_go_ycsb([path], scenario="ycsb_a", server="x")
    assert a.run.options["ycsb.requestdistribution"] == "uniform"
    assert "go-ycsb ran requestdistribution=uniform; dbperf's ycsb_a runs requestdistribution=zipfian" in " ".join(
        a.run.notes
    )
    [same] = import_go_ycsb([YCSB / "ycsb_a_run.log"], scenario="ycsb_a", server="x")
    assert not any("go-ycsb ran" in n for n in same.run.notes)
    # go-ycsb's shipped workloade: uniform, maxscanlength=1; unprinted properties take go-ycsb's defaults
    shipped = {"scanproportion": "0.95", "insertproportion": "0.05", "readproportion": "0", "updateproportion": "0",
               "requestdistribution": "uniform", "maxscanlength": "1"}  # fmt: skip
    said = property_mismatch("ycsb_e", shipped)
    assert said is not None and "requestdistribution=uniform, maxscanlength=1" in said
    assert "requestdistribution=zipfian, maxscanlength=100" in said
    assert property_mismatch("prod-mix", shipped) is None  # not a dbperf workload: nothing to compare


def test_the_reference_table_is_what_the_lua_workloads_run() -> None:
    common = (SCENARIOS / "lua" / "ycsb_common.lua").read_text()
    assert re.search(r'max_scan_length = \{ "[^"]*", 100 \}', common)
    for name, props in DBPERF_YCSB.items():
        lua = (SCENARIOS / "lua" / f"{name}.lua").read_text()
        define = re.search(r"ycsb\.define\(\{(.*)\}\)", lua)
        assert define is not None, name
        fields = dict(re.findall(r"(\w+) = (\"?[\w.]+\"?)", define[1]))
        mix = {k: float(v) for k, v in fields.items() if k not in ("name", "distribution")}
        for op in ("read", "update", "insert", "scan", "read_modify_write"):
            assert float(props[f"{op.replace('_', '')}proportion"]) == mix.get(op, 0.0), (name, op)
        assert props["requestdistribution"] == fields.get("distribution", '"zipfian"').strip('"'), name


def _json_line(rows: list[dict[str, str]]) -> str:
    return json.dumps([dict(sorted(r.items())) for r in rows], separators=(",", ":"))  # json.Marshal: sorted keys


def _to_json(text: str, layouts: tuple[tuple[str, ...], ...], tpc_style: bool) -> str:
    """A plain log rewritten as the tool's json style prints it: one array per report (consecutive op lines)."""
    out: list[str] = []
    report: list[dict[str, str]] = []
    for line in [*text.splitlines(), ""]:
        m = _PLAIN.match(line.strip())
        if m is not None and report and (m["name"].lower() <= report[-1]["Operation"].lower()):
            out.append(_json_line(report))  # the sorted order starts again: the next report
            report = []
        if m is not None:
            row = dict(part.split(": ", 1) for part in m["body"].split(", "))
            assert tuple(row) in layouts
            row["Operation"] = m["name"]
            if tpc_style:
                row["Prefix"] = m["prefix"]
            report.append(row)
            continue
        if report:
            out.append(_json_line(report))
            report = []
        t = re.match(r"^tpmC: (\S+), tpmTotal: (\S+), efficiency: (\S+)$", line)
        out.append(_json_line([{"tpmC": t[1], "tpmTotal": t[2], "efficiency": t[3]}]) if t else line)
    return "\n".join(out)


def test_go_tpc_json_output_reads_like_the_plain_output(tmp_path: Path) -> None:
    plain = TPC / "tpcc_clean.log"
    path = tmp_path / "tpcc.json.log"
    path.write_text(_to_json(plain.read_text(), TPC_LAYOUTS, tpc_style=True))
    assert path.read_text().count('[{"50th(ms)"') == 7  # 6 [Current] reports and the [Summary]
    [a] = import_go_tpc([plain], scenario="tpcc", server="x", threads=8)
    [b] = import_go_tpc([path], scenario="tpcc", server="x", threads=8)
    assert b.nopm == a.nopm == 3047.8
    assert b.run.operations == a.run.operations and b.run.intervals == a.run.intervals


def test_go_ycsb_json_output_reads_like_the_plain_output(tmp_path: Path) -> None:
    plain = YCSB / "ycsb_a_run.log"
    path = tmp_path / "ycsb.json.log"
    path.write_text(_to_json(plain.read_text(), YCSB_LAYOUTS, tpc_style=False))
    [a] = import_go_ycsb([plain], scenario="ycsb_a", server="x")
    [b] = import_go_ycsb([path], scenario="ycsb_a", server="x")
    assert b.run.operations == a.run.operations and b.run.intervals == a.run.intervals
    assert b.run.metrics == a.run.metrics
