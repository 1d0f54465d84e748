"""tpcc's inputs against the reference tools' numbers, read from the server's general log: the table in
docs/tpcc-fidelity.md.

For each script given (a folder holding tpcc.lua and dbperf_ops.lua, e.g. an earlier commit's), a throwaway
MariaDB is loaded with 3 warehouses of 10,000 items, the consistency check runs on the loaded rows, then one
run at each thread count (10 s, --rand-seed=11) with the general log on; the measurement is
tests/integration/test_tpcc_fidelity.py's ``measure``. Prints one markdown table per thread count.

    mkdir -p /tmp/before && git show <commit>:scenarios/lua/tpcc.lua > /tmp/before/tpcc.lua \\
        && cp scenarios/lua/dbperf_ops.lua /tmp/before/
    .venv/bin/python benchmarks/tpcc_fidelity.py before=/tmp/before after=scenarios/lua [--threads 1,8]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]  # harness, and the tests' shared code (support)

from support.integration import throwaway_mariadb  # noqa: E402

from harness.measure import consistency  # noqa: E402
from tests.integration import test_tpcc_fidelity as fidelity  # noqa: E402

REFERENCE = {
    **{f"mix {t}": f"{p:.0%}" for t, p in fidelity.MIX.items()},
    **{f"home w{w}": f"{1 / fidelity.WAREHOUSES:.1%}" for w in range(1, fidelity.WAREHOUSES + 1)},
    "remote lines": "1%",
    "remote payments": "15%",
    "by-name payments": "60%",
    "by-name order-status": "60%",
    "customers per by-name lookup": "3.22 (3.41 at 3,000 customers)",
    "transactions": "",
}


def _measure(script: Path, threads: list[int], seconds: int) -> dict[str, dict[str, object]]:
    root = Path(tempfile.mkdtemp(prefix="tpcc-fidelity-"))
    try:
        script_dir = root / "lua"
        script_dir.mkdir()
        for name in ("tpcc.lua", "dbperf_ops.lua"):
            shutil.copy(script / name, script_dir / name)
        options = ("--innodb-lock-wait-timeout=2", "--innodb-flush-log-at-trx-commit=2", "--log-output=FILE")
        out: dict[str, dict[str, object]] = {}
        with throwaway_mariadb(root / "d", *options) as endpoint:
            fidelity.sysbench(script_dir, endpoint, "prepare", "--threads=2")
            loaded = consistency.check_tpcc(endpoint)
            for t in threads:
                seen = fidelity.measure(script_dir, endpoint, root / f"general-{t}.log", t, seconds, seed=11)
                out[str(t)] = {**seen.row(), "violations after the run": seen.violations, "loaded": loaded}
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _cell(key: str, value: object) -> str:
    if isinstance(value, str) or value is None:
        return "hold" if value is None else ", ".join(f"{n}" for n in _named(value)) + " fail"
    assert isinstance(value, float | int)
    if key == "transactions":
        return f"{int(value):,}"
    return f"{value:.2f}" if key.startswith("customers") else f"{value:.1%}"


def _named(line: str) -> list[str]:
    return [part.split(" violated")[0].strip() for part in line.split("condition ")[1:]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scripts", nargs="+", help="label=folder with tpcc.lua and dbperf_ops.lua")
    parser.add_argument("--threads", default="1,8")
    parser.add_argument("--time", type=int, default=10)
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    labels = [s.split("=", 1)[0] for s in args.scripts]
    results = [_measure(Path(s.split("=", 1)[1]), threads, args.time) for s in args.scripts]
    for t in map(str, threads):
        print(f"\n{t} thread(s), {fidelity.WAREHOUSES} warehouses, {fidelity.ITEMS:,} items\n")
        print("| feature | reference | " + " | ".join(f"dbperf {label}" for label in labels) + " |")
        print("| --- | --- | " + " | ".join("---" for _ in labels) + " |")
        for key, ref in REFERENCE.items():
            print(f"| {key} | {ref} | " + " | ".join(_cell(key, r[t][key]) for r in results) + " |")
        for key in ("loaded", "violations after the run"):
            row = " | ".join(_cell(key, r[t][key]) for r in results)
            print(f"| consistency 1-10, 12 ({key}) | hold | {row} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
