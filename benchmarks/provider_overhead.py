"""Overhead per run of each provider: restore the snapshot, start the server until it answers, stop it.

    python benchmarks/provider_overhead.py [--servers mariadb-local,mariadb-10.11,mysql-9.7] [--repeat 5]

Prints, per server, the median and range of: copying the dataset snapshot, starting the server until
``SELECT VERSION()`` answers, and a clean stop (the part of every repetition that is not sysbench).
"""

from __future__ import annotations

import argparse
import statistics
import time

from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.config.settings import resolve_settings
from harness.dataset import DatasetCache
from harness.measure.provision import Provisioner
from harness.servers.provider import Launch
from harness.sysbench.driver import check_version


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", default="mariadb-local,mariadb-10.11,mysql-9.7")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    settings = resolve_settings({})
    scenario = load_scenario("oltp_point_select", settings.scenarios_dir, "quick")
    cache = DatasetCache(settings.cache_dir)
    version = check_version()
    print(f"{'server':<16} {'restore s':>10} {'start s':>10} {'stop s':>10} {'total s':>10}  (median of {args.repeat})")
    for name in args.servers.split(","):
        server = load_server(name, settings.servers_dir)
        provisioner = Provisioner(cache, version, lambda _message: None)
        setup = provisioner.setup(server, scenario)
        provider, snapshot = setup.provider, provisioner.snapshot(setup)
        assert snapshot is not None, f"{name}: an external server has no snapshot to restore"
        rows: list[tuple[float, float, float]] = []
        for _ in range(args.repeat):
            t0 = time.monotonic()
            with cache.restore(snapshot) as datadir:
                t1 = time.monotonic()
                serving = provider.serve(Launch(datadir, snapshot.credentials, setup.variables))
                serving.__enter__()
                t2 = time.monotonic()
                serving.__exit__(None, None, None)
                t3 = time.monotonic()
            rows.append((t1 - t0, t2 - t1, t3 - t2))
        med = [statistics.median(col) for col in zip(*rows, strict=True)]
        print(
            f"{name:<16} {med[0]:>10.2f} {med[1]:>10.2f} {med[2]:>10.2f} {sum(med):>10.2f}  "
            f"(total range {min(map(sum, rows)):.2f}-{max(map(sum, rows)):.2f})"
        )


if __name__ == "__main__":
    main()
