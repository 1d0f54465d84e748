"""What the planner promises against what it takes: ``dbperf ci plan``'s estimate vs ``dbperf ci run``'s wall time.

    python benchmarks/plan_estimate.py [--out /tmp/plan-estimate] [--only 1,5] [--durations-from STORE]

A scratch clone of this checkout gets one committed change, the one a pull request makes most often:
``innodb_buffer_pool_size`` in the shared ``servers/conf/mariadb.cnf``. Then five plans of different
scopes run for real, one after the other, each as the pull-request check runs it::

    dbperf ci plan --base main --head HEAD ... --json     # the estimate
    dbperf ci run  --base main --head HEAD ... --out DIR  # timed, wall clock, start to exit

1. one server, cost only (``--servers mariadb-local -s oltp_point_select``)
2. two servers, cost (``--servers local -s oltp_point_select``)
3. timing only, quick profile, forced pairs (``--no-cost --profile quick --repetitions 10``)
4. timing only, quick profile, pairs raised by the design check (the profile's 1 repetition is too few)
5. the default pull-request check of the change (``--servers local``, default scenarios, ``ci`` profile)

The estimate prices each run by this machine's recent runs of the same kind in the store (``--store``):
after each plan its runs are added to that store, so later plans are priced by what earlier ones
measured (``--durations-from`` seeds it with an earlier store, e.g. a ``dbperf ci run``'s
``out/dbperf.duckdb``). Dataset snapshots are prepared before the first plan (not counted, as the
estimate says). Prints one row per plan: estimate, actual, actual/estimate, and the load average; the
target is a ratio within 0.75-1.25. Wall times depend on the machine's load; note it beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CHANGE = ("innodb_buffer_pool_size = 512M", "innodb_buffer_pool_size = 8M")


@dataclass(frozen=True)
class Plan:
    name: str
    args: tuple[str, ...]


PLANS = (
    Plan("one server, cost only", ("--servers", "mariadb-local", "-s", "oltp_point_select")),
    Plan("two servers, cost", ("--servers", "local", "-s", "oltp_point_select")),
    Plan(
        "timing only, quick, 10 pairs forced",
        (
            "--servers",
            "mariadb-local",
            "-s",
            "oltp_read_write",
            "--no-cost",
            "--profile",
            "quick",
            "--repetitions",
            "10",
        ),
    ),
    Plan(
        "timing only, quick, pairs raised by the design check",
        ("--servers", "mariadb-local", "-s", "oltp_point_select", "--no-cost", "--profile", "quick"),
    ),
    Plan("default PR check of the mariadb.cnf change", ("--servers", "local")),
)


def dbperf(clone: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=clone, env=env, capture_output=True, text=True, check=False
    )


def git(clone: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(clone), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args],
        check=True,
        capture_output=True,
    )


def scratch_clone(folder: Path) -> Path:
    clone = folder / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)  # HEAD: commit what you measure
    git(clone, "checkout", "-q", "-B", "main")
    git(clone, "checkout", "-q", "-b", "pr")
    cnf = clone / "servers" / "conf" / "mariadb.cnf"
    text = cnf.read_text()
    if CHANGE[0] not in text:
        raise SystemExit(f"{cnf} has no line {CHANGE[0]!r} to change")
    cnf.write_text(text.replace(*CHANGE))
    git(clone, "commit", "-qam", "Shrink the buffer pool")
    return clone


def add_runs(source: Path, target: Path) -> int:
    """Copy every run of the store ``source`` into ``target`` (this machine's durations for the next plans)."""
    from harness.store import open_store

    if not source.is_file():
        return 0
    tables = open_store(source).export_tables()
    n = int(tables["runs"].num_rows)
    if n:
        open_store(target).save_tables(tables)
    return n


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def arguments(doc: str | None, out: Path, only: str, count: int) -> tuple[argparse.Namespace, Path, list[int]]:
    """The options both plan benchmarks take (``--out``, ``--only``, ``--durations-from``), the output
    folder (made) and the numbers chosen among ``count`` (all by default; others refused in one line)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--only", default="", help=f"comma-separated {only}")
    parser.add_argument("--durations-from", type=Path, action="append", default=[], help="seed the store")
    args = parser.parse_args()
    try:
        chosen = [int(n) for n in args.only.split(",") if n] or list(range(1, count + 1))
    except ValueError:
        parser.error(f"--only takes numbers from 1 to {count}, comma-separated")
    if not all(1 <= n <= count for n in chosen):
        parser.error(f"--only takes numbers from 1 to {count}, comma-separated")
    folder = args.out.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return args, folder, chosen


def timed_ci_run(
    clone: Path, refs: tuple[str, ...], out: Path, log: Path, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], float, str]:
    """``dbperf ci run`` of ``refs`` into ``out``, timed start to exit: the process, its seconds and the load
    average before it; its output is kept in ``log``."""
    shutil.rmtree(out, ignore_errors=True)
    before = load()
    started = time.monotonic()
    done = dbperf(clone, "ci", "run", *refs, "--out", str(out), env=env)
    actual = time.monotonic() - started
    log.write_text(done.stdout + done.stderr)
    return done, actual, before


def results(
    folder: Path, rows: list[dict[str, Any]], header: tuple[str, ...], cells: Callable[[dict[str, Any]], list[Any]]
) -> None:
    """The rows into ``folder/results.json``, and printed as a Markdown table of ``header`` and each row's cells."""
    (folder / "results.json").write_text(json.dumps(rows, indent=2) + "\n")
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in cells(row)) + " |")


def seeded_store(store: Path, seeds: list[Path]) -> Path:
    """``store`` with every run of each earlier store in ``seeds`` added (this machine's durations)."""
    for seed in seeds:
        print(f"seeded the store with {add_runs(seed.resolve(), store)} run(s) of {seed}", file=sys.stderr)
    return store


def clone_env(clone: Path, store: Path, **extra: str) -> dict[str, str]:
    """The environment dbperf runs in: the clone's code (edits to this checkout during the runs change
    nothing), ``store`` as the user's store, and no ``DBPERF_*`` selection inherited from the caller."""
    env = {**os.environ, "PYTHONPATH": str(clone), "DBPERF_STORE": str(store), "COLUMNS": "200", **extra}
    for var in ("DBPERF_SCENARIO", "DBPERF_SERVER", "DBPERF_PROFILE", "DBPERF_REPETITIONS", "DBPERF_COST"):
        env.pop(var, None)
    return env


def main() -> int:
    args, folder, chosen = arguments(
        __doc__, Path("/tmp/dbperf-plan-estimate"), "plan numbers (default: all five)", len(PLANS)
    )
    store = seeded_store(folder / "durations.duckdb", args.durations_from)
    clone = scratch_clone(folder)
    env = clone_env(clone, store, DBPERF_CACHE_DIR=str(folder / "cache"))
    for server in ("mariadb-local", "mariadb-local-threadpool"):  # the datasets: prepared once, not counted
        for profile in ("quick", "ci"):
            warm = dbperf(
                clone,
                *("run", "--server", server, "-s", "oltp_point_select,oltp_read_write", "--profile", profile),
                *("--repetitions", "1", "--time", "1", "--warmup", "0", "--store", str(folder / "warm.duckdb")),
                env=env,
            )
            if warm.returncode != 0:
                print(f"preparing the datasets failed:\n{warm.stderr[-2000:]}", file=sys.stderr)
                return 2
    rows = []
    for number in chosen:
        plan = PLANS[number - 1]
        base = ("--base", "main", "--head", "HEAD", *plan.args)
        planned = dbperf(clone, "ci", "plan", *base, "--json", env=env)
        if planned.returncode != 0:
            print(f"plan {number}: ci plan failed:\n{planned.stderr[-2000:]}", file=sys.stderr)
            continue
        doc = json.loads(planned.stdout)
        estimate = doc["estimate"]
        out = folder / f"out-{number}"
        done, actual, before = timed_ci_run(clone, base, out, folder / f"run-{number}.log", env)
        if done.returncode not in (0, 1):
            print(f"plan {number}: ci run exited {done.returncode}:\n{done.stderr[-2000:]}", file=sys.stderr)
        added = add_runs(out / "dbperf.duckdb", store)
        sources = {i["source"].split(" (")[0] for i in estimate["items"]}
        row = {
            "plan": number,
            "name": plan.name,
            "kinds": sorted({k for c in doc["comparisons"] for k in c["kinds"]}),
            "comparisons": len(doc["comparisons"]),
            "pairs": estimate["pairs"],
            "runs": added,
            "estimate_s": estimate["seconds"],
            "actual_s": round(actual),
            "ratio": round(actual / estimate["seconds"], 2) if estimate["seconds"] else None,
            "figures": "/".join(sorted(sources)),
            "load": f"{before} → {load()}",
            "exit": done.returncode,
        }
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    header = ("#", "plan", "kinds", "comparisons", "pairs", "runs", "estimate", "actual", "actual/estimate")
    results(folder, rows, (*header, "figures", "load (1/5/15 min)"), lambda r: [
        r["plan"], r["name"], "+".join(r["kinds"]), r["comparisons"], r["pairs"] or "-", r["runs"],
        f"{r['estimate_s'] / 60:.1f} min", f"{r['actual_s'] / 60:.1f} min", r["ratio"], r["figures"], r["load"],
    ])  # fmt: skip
    within = sum(1 for r in rows if r["ratio"] is not None and 0.75 <= r["ratio"] <= 1.25)
    print(f"\n{within} of {len(rows)} plan(s) within ±25 % of the estimate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
