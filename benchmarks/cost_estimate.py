"""A cost compare's estimate before any run of it and after one, against its real wall time (issue 33, item 3).

    python benchmarks/cost_estimate.py [--server mariadb-local] [-s oltp_point_select,ycsb_e,...]
                                       [--out /tmp/dbperf-cost-estimate]

For each scenario, in a fresh store (``--out``/``SERVER-SCENARIO.duckdb``): the estimate of an A/A
``dbperf compare --base S --head S --cost -s X`` (quick profile, the scenario's cost pairs, two at a time),
computed as the compare computes it (:func:`harness.pipeline.estimates.of_work` over the store's history:
nothing stored and the runner's invocation ledger emptied, so "assumed"), then the compare itself, timed
start to exit; then the estimate again (now priced by the six runs the first compare stored and by its
measured overhead, :mod:`harness.pipeline.overhead`) and a second compare, timed. The datasets are prepared
first (a one-second timing run each, not counted), so both compares restore snapshots.

Prints one row per scenario: assumed estimate, real, real/estimate; measured estimate, real, real/estimate;
the load average before each compare; and the instructions per transaction counted (the runs' own, to check
a family's instructions against MariaDB's). Targets: assumed within 0.5-2x, measured within 0.75-1.25x.
Rows go to ``--out``/``results.json`` as they finish. Wall times follow the machine's load; counts do not.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT = "oltp_point_select,ycsb_e,tpcc,oltp_insert,oltp_read_write,select_random_ranges,cloud_mix,ycsb_c"
STORED = re.compile(r"✔ (\S+) \S+ \d+t cost #\d+: ([\d,]+) instructions/txn")
SAID = re.compile(r"» (estimate: about .*)$")


def dbperf(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    for var in ("DBPERF_SCENARIO", "DBPERF_SERVER", "DBPERF_PROFILE", "DBPERF_REPETITIONS", "DBPERF_COST"):
        env.pop(var, None)
    argv = [sys.executable, "-m", "harness", *args]
    return subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, check=False)


def estimate(server: str, scenario: str, store: Path, cache: Path) -> tuple[float, str, float]:
    """The compare's estimate, as ``dbperf compare`` computes it before its first run: seconds, the runs'
    sources and the overhead (its seconds; its source is "measured" when the runner's ledger has one)."""
    from harness.config.scenarios import load_scenario
    from harness.config.servers import load_server
    from harness.config.settings import apply_overrides, resolve_settings
    from harness.pipeline import estimates
    from harness.pipeline.ab import ComparisonSpec

    flags = {"store": str(store), "cache-dir": str(cache), "profile": "quick", "cost": True}
    settings = resolve_settings(flags, environ={}, root=REPO)
    base = load_server(server, settings.servers_dir)
    head = base.with_variables({}, name=f"{base.name}(A/A)")
    case = apply_overrides(load_scenario(scenario, settings.scenarios_dir, "quick"), settings)
    work = estimates.of_specs([ComparisonSpec(base, head, case)], ("cost",), case.repetitions)
    found = estimates.of_work(settings, work, estimates.recent_history(store), comparisons=1)
    sources = {i.source.split(" (")[0] for i in found.items} | {found.overhead_source.split(" (")[0]}
    return found.seconds, "/".join(sorted(sources)), found.overhead_s


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def compare(server: str, scenario: str, store: Path, cache: Path, log: Path) -> dict[str, Any]:
    """One A/A cost compare, timed start to exit, with the load before it and the counts it stored."""
    before = load()
    started = time.monotonic()
    done = dbperf(
        *("compare", "--base", server, "--head", server, "--cost", "-s", scenario, "--profile", "quick"),
        *("--store", str(store), "--cache-dir", str(cache), "--yes"),
    )
    real = time.monotonic() - started
    log.write_text(done.stdout + done.stderr)
    counts = [int(m.group(2).replace(",", "")) for line in done.stderr.splitlines() if (m := STORED.search(line))]
    said = next((m.group(1) for line in done.stderr.splitlines() if (m := SAID.search(line))), "")
    return {"real_s": round(real, 1), "load": before, "exit": done.returncode, "instr": counts, "said": said}


def main() -> int:
    from harness.pipeline.overhead import LEDGER

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("-s", "--scenarios", default=DEFAULT)
    parser.add_argument("--out", type=Path, default=Path("/tmp/dbperf-cost-estimate"))
    args = parser.parse_args()
    folder: Path = args.out.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    cache = folder / "cache"
    scenarios = [s for s in args.scenarios.split(",") if s]
    warm = dbperf(
        *("run", "--server", args.server, "-s", ",".join(scenarios), "--profile", "quick", "--no-cost"),
        *("--repetitions", "1", "--time", "1", "--warmup", "0", "--threads", "1"),
        *("--store", str(folder / "warm.duckdb"), "--cache-dir", str(cache)),
    )
    if warm.returncode != 0:
        print(f"preparing the datasets failed:\n{warm.stderr[-2000:]}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    for scenario in scenarios:
        store = folder / f"{args.server}-{scenario}.duckdb"
        for stale in folder.glob(f"{store.stem}.*"):  # a fresh store: nothing measured yet
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
        row: dict[str, Any] = {"server": args.server, "scenario": scenario}
        (cache / LEDGER).unlink(missing_ok=True)  # the first estimate: no run and no invocation measured
        for n in (1, 2):
            seconds, source, overhead_s = estimate(args.server, scenario, store, cache)
            found = compare(args.server, scenario, store, cache, folder / f"{args.server}-{scenario}-{n}.log")
            row[f"run{n}"] = {"estimate_s": round(seconds, 1), "source": source, "overhead_s": overhead_s, **found}
            row[f"run{n}"]["ratio"] = round(found["real_s"] / seconds, 2)
        row["load_after"] = load()
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
        (folder / f"results-{args.server}.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(f"{args.server}: A/A compare --cost, quick profile, two at a time; real/estimate")
    print(
        "| scenario | instr/txn | assumed estimate | real | ratio | measured estimate (overhead) | real | ratio "
        "| load |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        one, two = r["run1"], r["run2"]
        instr = sorted(one["instr"])[len(one["instr"]) // 2] if one["instr"] else 0
        print(
            f"| {r['scenario']} | {instr:,} | {one['estimate_s']:.0f} s ({one['source']}) | {one['real_s']:.0f} s "
            f"| {one['ratio']:.2f} | {two['estimate_s']:.0f} s ({two['source']}; {two['overhead_s']:.0f} s) "
            f"| {two['real_s']:.0f} s "
            f"| {two['ratio']:.2f} | {one['load']} → {two['load']} → {r['load_after']} |"
        )
    for key, low, high in (("run1", 0.5, 2.0), ("run2", 0.75, 1.25)):
        within = sum(1 for r in rows if low <= r[key]["ratio"] <= high)
        print(f"{key}: {within} of {len(rows)} within {low}-{high}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
