"""How much a dataset snapshot saves: prepare 8 tables x 1 M rows once vs restore the snapshot.

Prepares the dataset on a fresh local MariaDB (``mariadb-local``) through the same dataset cache the
harness uses, then restores the snapshot a few times the way every repetition does (copy the stopped
server's datadir, start a server on the copy, wait until it answers) and prints the prepare time, each
restore time and the ratios.

    .venv/bin/python benchmarks/snapshot_ratio.py [--tables 8] [--table-size 1000000] [--restores 3]

The gate (exit 1 below ``--min-ratio``, 10 by default) is prepare / median restore: what each
repetition pays. The first restore is also printed on its own: InnoDB writes its files with O_DIRECT,
so the new snapshot is not in the page cache and the first copy reads it from disk; later copies read
it from memory. ``--strict`` gates on that slowest (cold) restore instead.

The cache is a fresh temporary folder (removed at the end unless ``--keep``), so the prepare is always
measured. Besides sysbench's prepare alone, the script prints the whole cold build (initialise the
datadir, start, prepare, clean shutdown) for reference.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.dataset import DatasetCache
from harness.measure.provision import Provisioner
from harness.servers.provider import Launch, connect
from harness.sysbench.driver import check_version

REPO = Path(__file__).resolve().parents[1]


def datadir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def count_rows(endpoint, table: str) -> int:
    conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password, endpoint.database)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT COUNT(*) FROM {table}")
            row = cur.fetchone()
    finally:
        conn.close()
    return int(row[0]) if row else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="mariadb-local", help="local server (default mariadb-local)")
    parser.add_argument("--scenario", default="oltp_point_select", help="scenario whose script prepares")
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--table-size", type=int, default=1_000_000)
    parser.add_argument("--restores", type=int, default=3, help="restores to time (the median is used)")
    parser.add_argument("--min-ratio", type=float, default=10.0)
    parser.add_argument("--strict", action="store_true", help="gate on the slowest (cold) restore, not the median")
    parser.add_argument("--work-dir", type=Path, default=None, help="cache folder (default: a fresh temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the snapshot afterwards")
    args = parser.parse_args()

    server = load_server(args.server, REPO / "servers")
    if server.provider != "local":
        parser.error(f"{args.server} is a {server.provider} server; this benchmark times the local provider")
    scenario = dataclasses.replace(
        load_scenario(args.scenario, REPO / "scenarios", "quick"),
        tables=args.tables,
        table_size=args.table_size,
    )
    sysbench_version = check_version()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="dbperf-snapshot-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    cache = DatasetCache(work)
    provisioner = Provisioner(cache, sysbench_version, lambda m: print(f"  {m}", flush=True))
    setup = provisioner.setup(server, scenario)
    provider = setup.provider
    print(f"server {server.name}: {setup.build_id}")
    print(f"dataset {scenario.tables} tables x {scenario.table_size:,} rows ({scenario.script}), cache {work}")
    try:
        cache.clear()  # a cold build every time
        started = time.monotonic()
        snapshot = provisioner.snapshot(setup)
        assert snapshot is not None
        build_s = time.monotonic() - started
        size_gb = datadir_size(snapshot.datadir) / 1e9
        print(f"prepare (sysbench prepare):            {snapshot.prepare_s:8.2f} s")
        print(f"cold build (init+start+prepare+stop):  {build_s:8.2f} s   snapshot {size_gb:.2f} GB")

        variables = setup.variables
        restores: list[float] = []
        for i in range(1, args.restores + 1):
            t0 = time.monotonic()
            with cache.restore(snapshot) as datadir:
                copied = time.monotonic() - t0
                with provider.serve(Launch(datadir, snapshot.credentials, variables)) as instance:
                    ready = time.monotonic() - t0
                    rows = count_rows(instance.endpoint, f"sbtest{scenario.tables}")
                    if rows != scenario.table_size:
                        print(f"restored sbtest{scenario.tables} has {rows} rows, expected {scenario.table_size}")
                        return 2
                    stop_from = time.monotonic()
                stopped = time.monotonic() - stop_from
            restores.append(ready)
            print(
                f"restore #{i} (copy + start until ready): {ready:8.2f} s   "
                f"(copy {copied:.2f} s, start {ready - copied:.2f} s; stop+cleanup {stopped:.2f} s, not counted)"
            )
        restore_s = statistics.median(restores)
        ratio = snapshot.prepare_s / restore_s
        worst = snapshot.prepare_s / max(restores)
        print(f"restore (median of {len(restores)}):                {restore_s:8.2f} s")
        print(
            f"ratio prepare / restore:               {ratio:8.1f}x   "
            f"(slowest restore: {worst:.1f}x; cold build / restore: {build_s / restore_s:.1f}x)"
        )
        gated, what = (worst, "slowest restore") if args.strict else (ratio, "median restore")
        if gated < args.min_ratio:
            print(f"FAIL: prepare / {what} = {gated:.1f}, below {args.min_ratio:g}")
            return 1
        print(f"ok: prepare / {what} = {gated:.1f} >= {args.min_ratio:g}")
        return 0
    finally:
        if not args.keep and args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
