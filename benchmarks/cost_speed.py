"""Where the minutes of a cost compare go: one ``dbperf compare --cost`` (quick profile, 3 runs a side), timed.

    python benchmarks/cost_speed.py [--server mariadb-local] [--scenario oltp_insert] [--repetitions 3]
                                    [--slots 1|2] [--store S] [--log FILE]

Runs an A/A cost compare of ``--server`` (base and head the same server) as a subprocess, stamps every progress
line as it arrives, and prints: the load before and after (``os.getloadavg``), the seconds before the first cost
run starts (session checks, plan capture, dataset preparation), each run's split as the run reports it (server
ready, prewarm, warm-up, purge, rebuild, window, dump) plus the seconds from its dump to its stored line (server
stop, save), summed per phase over the runs, the seconds after the last run (judging, report), the total,
and the estimate dbperf said before it started beside it (from an empty store: all "assumed").
Then the counts of each side (instructions and syscalls per transaction, per run) so two invocations can be
checked to count the same. ``--slots`` sets ``DBPERF_COST_SLOTS`` (1: one run at a time; 2: two side by side);
with two slots the per-phase sums add up to more than the wall time.

Counts do not depend on the load; every second printed does.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

SPLIT = re.compile(r"(\S+) \S+ \d+t cost #(\d+): [\d,]+ instructions per transaction .*; seconds: (.*)$")
ESTIMATE = re.compile(r"» estimate: about (\d+) (s|min) in all \(\d+ run\(s\), ([^;)]*)")
STORED = re.compile(r"✔ (\S+) \S+ (\d+)t cost #(\d+): ([\d,]+) instructions/txn, ([\d.]+) syscalls/txn")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("--scenario", default="oltp_insert")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--slots", type=int, default=None, help="DBPERF_COST_SLOTS (default: dbperf's own)")
    parser.add_argument("--store", default="", help="store (default: a temporary DuckDB file)")
    parser.add_argument("--log", default="", help="also write the stamped progress lines here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cost-speed-") as tmp:
        store = args.store or str(Path(tmp) / "runs.duckdb")
        argv = [
            *(sys.executable, "-m", "harness", "compare", "--base", args.server, "--head", args.server, "--cost"),
            *("--scenario", args.scenario, "--profile", "quick", "--repetitions", str(args.repetitions)),
            *("--store", store, "--yes"),
        ]
        env = dict(os.environ)
        if args.slots is not None:
            env["DBPERF_COST_SLOTS"] = str(args.slots)
        load_before = os.getloadavg()
        started = time.monotonic()
        lines: list[tuple[float, str]] = []
        with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env) as proc:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append((time.monotonic() - started, line.rstrip("\n")))
        total = time.monotonic() - started
        load_after = os.getloadavg()
    if args.log:
        Path(args.log).write_text("".join(f"{t:8.1f} {line}\n" for t, line in lines))
    print(f"{args.server} {args.scenario}: {args.repetitions} cost runs a side, slots {args.slots or 'default'}")
    print(
        f"load before {_load(load_before)}, after {_load(load_after)} ({os.cpu_count()} cores); exit {proc.returncode}"
    )
    _report(lines, total)
    return proc.returncode


def _load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.2f}" for x in load)


def _report(lines: list[tuple[float, str]], total: float) -> None:
    first_run = next((t for t, line in lines if "counting " in line and " under callgrind" in line), None)
    phases: dict[str, float] = defaultdict(float)
    dumped: dict[tuple[str, str], float] = {}
    counts: dict[str, list[str]] = defaultdict(list)
    last_stored = 0.0
    runs = 0
    for t, line in lines:
        if (split := SPLIT.search(line)) is not None:
            runs += 1
            dumped[(split.group(1), split.group(2))] = t
            for part in split.group(3).split(", "):
                name, _, seconds = part.rpartition(" ")
                phases[name] += float(seconds)
        elif (stored := STORED.search(line)) is not None:
            server, _threads, number, instr, syscalls = stored.groups()
            phases["stop and save"] += t - dumped.get((server, number), t)
            counts[server].append(f"#{number} {instr} instr/txn {syscalls} syscalls/txn")
            last_stored = t
    if first_run is None:
        print("no cost run started; the progress lines:", *(line for _, line in lines[-20:]), sep="\n  ")
        return
    print(f"before the first run (session checks, plans, dataset): {first_run:.1f} s")
    print(f"runs: {runs}, from the first start to the last stored: {last_stored - first_run:.1f} s; per phase, summed:")
    for name, seconds in phases.items():
        print(f"  {name:<14} {seconds:7.1f} s  ({seconds / max(1, runs):.1f} s a run)")
    print(f"after the last run (judging, report): {total - last_stored:.1f} s")
    print(f"total: {total:.1f} s ({total / 60:.2f} min)")
    estimate = next((m for _, line in lines if (m := ESTIMATE.search(line)) is not None), None)
    if estimate is not None:
        said = float(estimate.group(1)) * (60 if estimate.group(2) == "min" else 1)
        print(f"estimate said: {said:.0f} s ({estimate.group(3)}); real/estimate {total / said:.2f}")
    for server, found in counts.items():
        print(f"counts of {server}:", *sorted(found), sep="\n  ")


if __name__ == "__main__":
    sys.exit(main())
