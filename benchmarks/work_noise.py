"""The work vector's noise: every component per transaction over fresh servers, per scenario and server.

    dbperf run --cost --scenario S --server mariadb-local --repetitions 5 --store noise.duckdb   # per scenario
    python benchmarks/work_noise.py noise.duckdb [more.duckdb ...] [--compact | --spread]

Reads the stored cost runs (each a fresh server under callgrind) of one or more stores and prints, per
server x scenario x component, the mean per transaction, the SD, the CV and the range over the runs, and
whether the component gates (docs/work-vector.md holds the table of issue 20). A component repeats when
its SD is well inside what its minimum effect and floor allow (``min_effect x mean + floor``).
``--spread`` prints instructions per transaction only: every run's count, the spread (max - min) / mean
and the SD in per cent of the mean, flagged where the spread exceeds 0.1 % (docs/cost-noise.md).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import duckdb

from harness.measure.cost_dump import parse_dump
from harness.model.metrics import WORK_METRICS
from harness.model.work import WORK, work_vector


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stores", type=Path, nargs="+", metavar="STORE")
    parser.add_argument("--compact", action="store_true", help="one row per server x scenario: mean ±SD")
    parser.add_argument("--spread", action="store_true", help="instructions per transaction: runs, spread, SD")
    args = parser.parse_args()
    rows = []
    for store in args.stores:
        con = duckdb.connect(str(store), read_only=True)
        rows += con.execute(
            "SELECT server, scenario, server_version, totals_events, status_deltas, syscalls, instr_per_txn, p.dump "
            "FROM runs LEFT JOIN profiles p USING (run_id) WHERE kind = 'cost' AND status = 'ok' "
            "ORDER BY server, scenario, started_at"
        ).fetchall()
        con.close()
    groups: dict[tuple[str, str, str], list[dict[str, float]]] = defaultdict(list)
    for server, scenario, version, events, deltas, syscalls, instr, dump in rows:
        # the stored dump is parsed again, so the table groups system calls as this dbperf does
        calls = parse_dump(gzip.decompress(dump).decode()).syscalls if dump else json.loads(syscalls or "{}")
        vector = work_vector(int(events), json.loads(deltas or "{}"), calls)
        groups[(server, scenario, version.split("-")[0])].append({"instr_per_txn": float(instr), **vector})
    if args.spread:
        return spread(groups)
    if args.compact:
        return compact(groups)
    print("| server | scenario | runs | component | mean/txn | SD | CV | min-max | allowed | gates |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | --- | ---: | --- |")
    for (server, scenario, version), runs in sorted(groups.items()):
        for name in ("instr_per_txn", *(w.name for w in WORK_METRICS)):
            values = [r[name] for r in runs if name in r]
            if len(values) < 2:
                continue
            mean, sd = statistics.fmean(values), statistics.stdev(values)
            cv = f"{sd / mean * 100:.2f} %" if mean > 0 else "-"
            work = WORK.get(name)
            allowed = work.min_effect * mean + work.floor if work else 0.005 * mean
            gates = "yes" if (work is None or work.gating) else "info"
            flag = "" if sd < allowed / 4 else " (noisy)"
            print(
                f"| {server} {version} | {scenario} | {len(values)} | {name} | {mean:,.4g} | {sd:.3g} | {cv} | "
                f"{min(values):,.4g}-{max(values):,.4g} | {allowed:.3g} | {gates}{flag} |"
            )
    return 0


def compact(groups: dict[tuple[str, str, str], list[dict[str, float]]]) -> int:
    """One row per server x scenario, a column per component: ``mean ±SD`` per transaction (``*`` where the
    SD exceeds a quarter of what the component's minimum effect and floor allow)."""
    names = ["instr_per_txn", *(w.name for w in WORK_METRICS)]
    print("| server | scenario | runs | " + " | ".join(names) + " |")
    print("| --- | --- | ---: | " + " | ".join("---:" for _ in names) + " |")
    for (server, scenario, version), runs in sorted(groups.items()):
        cells = []
        for name in names:
            values = [r[name] for r in runs if name in r]
            if len(values) < 2:
                cells.append("-")
                continue
            mean, sd = statistics.fmean(values), statistics.stdev(values)
            work = WORK.get(name)
            allowed = work.min_effect * mean + work.floor if work else 0.005 * mean
            star = "*" if sd >= allowed / 4 else ""
            cells.append(f"{mean:,.4g} ±{sd:.2g}{star}" if mean else "0")
        print(f"| {server} {version} | {scenario} | {len(runs)} | " + " | ".join(cells) + " |")
    return 0


SPREAD_LIMIT_PCT = 0.1
"""What a write scenario's counts must repeat within over fresh servers (issue 25)."""


def spread(groups: dict[tuple[str, str, str], list[dict[str, float]]]) -> int:
    """One row per server x scenario: every run's instructions per transaction, (max - min) / mean, SD %."""
    print("| server | scenario | runs | instructions/txn | max-min | SD |")
    print("| --- | --- | ---: | --- | ---: | ---: |")
    for (server, scenario, version), runs in sorted(groups.items()):
        values = [r["instr_per_txn"] for r in runs]
        mean = statistics.fmean(values)
        width = (max(values) - min(values)) / mean * 100
        sd = statistics.stdev(values) / mean * 100 if len(values) > 1 else 0.0
        flag = " (over 0.1 %)" if width > SPREAD_LIMIT_PCT else ""
        counts = " / ".join(f"{v:,.0f}" for v in values)
        print(f"| {server} {version} | {scenario} | {len(values)} | {counts} | {width:.3f} %{flag} | {sd:.3f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
