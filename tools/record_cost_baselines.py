"""Re-record the committed cost baselines of the catalogue: ``baselines/cost/<server>/<scenario>/<profile>/``.

    .venv/bin/python tools/record_cost_baselines.py                 # every scenario whose baseline is missing or stale
    .venv/bin/python tools/record_cost_baselines.py --all --jobs 2  # every scenario (same recordings are kept)
    .venv/bin/python tools/record_cost_baselines.py tpcc ycsb_a --force

A baseline is stale when a gate could not judge against it, as far as is known before a run
(harness/pipeline/judgeable.py): no file, another scenario definition (its cost hash), or another server
build. Each scenario is one ``dbperf baseline record --cost`` (its ``[cost]`` repetitions, fresh servers
under callgrind), which keeps a recording of the same build and configuration unless ``--force``.
Instruction counts do not depend on the machine's load, so ``--jobs`` recordings run side by side (one
per core); each into its own store in a temporary folder, copied into ``--store`` at the end so later
estimates are measured. The table at the end gives each scenario's recording time (docs/usage.md,
"Baselines").
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness import pipeline
from harness.config.scenarios import available_scenarios
from harness.config.settings import resolve_settings
from harness.judge.baselines import find_baseline
from harness.pipeline.judgeable import reason_before
from harness.servers import provider_for
from harness.testbed import fingerprint

REPO = Path(__file__).resolve().parents[1]
DBPERF = [sys.executable, "-m", "harness"]


def stale(names: list[str], server: str, profile: str) -> dict[str, str]:
    """Each scenario's reason to record it again ("" when its committed baseline still judges)."""
    settings = resolve_settings({"server": server, "profile": profile}, root=REPO)
    testbed = fingerprint("1.0.20", with_engine=False)  # cost baselines are not per testbed
    out = {}
    for name in names:
        case = pipeline.resolve(settings, name, server)
        build = provider_for(case.server).server_build()
        reasons = [
            reason_before(
                find_baseline(settings.baselines_dir, testbed, server, name, profile, threads, "cost"),
                case.scenario,
                "cost",
                build,
            )
            for threads in case.scenario.cost.threads
        ]
        out[name] = next((r for r in reasons if r), "")
    return out


#: The recordings under way, stopped (SIGINT: dbperf stores the interrupted run and stops its server) when
#: this script is interrupted or terminated.
RUNNING: dict[str, subprocess.Popen[bytes]] = {}


def record(name: str, args: argparse.Namespace, work: Path) -> tuple[str, float, int]:
    argv = [*DBPERF, "baseline", "record", "--cost", "-s", name, "--server", args.server, "--profile", args.profile]
    argv += ["--store", str(work / f"{name}.duckdb"), *(["--force"] if args.force else [])]
    started = time.monotonic()
    with (work / f"{name}.log").open("w") as log:
        RUNNING[name] = subprocess.Popen(argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        code = RUNNING[name].wait()
        del RUNNING[name]
    seconds = time.monotonic() - started
    print(f"{name}: exit {code} after {seconds:.0f} s (log {work / name}.log)", flush=True)
    return name, seconds, code


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt("SIGTERM")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenarios", nargs="*", help="scenario names (default: the whole catalogue)")
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--jobs", type=int, default=2, help="recordings side by side (default 2: one per core)")
    parser.add_argument("--all", action="store_true", help="record every scenario, not only missing or stale ones")
    parser.add_argument("--force", action="store_true", help="replace recordings of the same build and configuration")
    parser.add_argument("--store", default=str(REPO / "results" / "dbperf.duckdb"), help="where the runs go at the end")
    parser.add_argument("--dry-run", action="store_true", help="say which scenarios would be recorded, and stop")
    args = parser.parse_args()
    names = args.scenarios or available_scenarios(REPO / "scenarios")
    if not (args.all or args.force or args.scenarios):
        reasons = stale(names, args.server, args.profile)
        for name, reason in reasons.items():
            print(f"{name}: {reason or 'up to date'}")
        names = [n for n in names if reasons[n]]
    if not names:
        print("every cost baseline is up to date")
        return 0
    if args.dry_run:
        print(f"would record: {', '.join(names)}")
        return 0
    signal.signal(signal.SIGTERM, _terminated)
    work = Path(tempfile.mkdtemp(prefix="dbperf-record-"))
    started = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        done = list(pool.map(lambda n: record(n, args, work), names))
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list(RUNNING.values()):
            proc.send_signal(signal.SIGINT)
        for proc in list(RUNNING.values()):
            proc.wait()
        print(f"interrupted: the logs are in {work}")
        return 130
    pool.shutdown()
    total = time.monotonic() - started
    print("\n| scenario | recording (s) | exit |\n| --- | --- | --- |")
    for name, seconds, code in done:
        print(f"| {name} | {seconds:.0f} | {code} |")
    print(f"\n{len(done)} recording(s) in {total / 60:.1f} min with {args.jobs} side by side")
    for store in sorted(work.glob("*.duckdb")):  # the runs, for this machine's estimates
        subprocess.run([*DBPERF, "store", "migrate", "--store", str(store), "--to", args.store], cwd=REPO, check=False)
    failed = [name for name, _, code in done if code != 0]
    if failed:
        print(f"failed: {', '.join(failed)}; their logs are in {work}")
        return 2
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
