"""The pull-request check for six kinds of change: the scenarios it picks and why, its estimate, its real time.

    python benchmarks/change_kinds.py [--out /tmp/dbperf-change-kinds] [--only 1,3] [--durations-from STORE]

A scratch clone of this checkout gets, one at a time, each change a pull request commonly makes, on a
branch of its own from ``main``; for each, ``dbperf ci plan --json`` gives the plan (comparisons, the
reason each scenario was chosen, the estimate, which figures were measured or assumed) and ``dbperf ci
run`` with its defaults runs it, timed start to exit:

1. durability: ``innodb_flush_log_at_trx_commit = 1`` in the shared ``servers/conf/mariadb.cnf``
2. buffer pool: ``innodb_buffer_pool_size`` 512M -> 8M in that file
3. a Lua file: ``scenarios/lua/ycsb_b.lua`` reads 95 % -> 90 %, updates 5 % -> 10 %
4. a server version: ``servers/mariadb-10.11.toml`` moved to the MariaDB 11.8 image
5. an optimizer switch: ``optimizer_switch = 'index_condition_pushdown=off'`` in ``mariadb.cnf``
6. per-statement overhead: ``performance_schema = ON`` in ``mariadb.cnf`` (the one-line change of issue 33's
   10-minute goal)

The runs go into one store (``DBPERF_STORE``, fresh unless ``--durations-from`` seeds it), as a runner
that keeps a store would: the first plan is priced by the profile (assumed), later ones by what earlier
ones measured where they share a server, scenario and kind. Prints one row per change with the load
average before and after it (the machine may be shared: the load is part of the figure). Needs the
container images of ``tools/build-images.sh`` and a running Docker engine (``tools/start-docker.sh``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from plan_estimate import arguments, clone_env, dbperf, git, load, results, seeded_store, timed_ci_run

REPO = Path(__file__).resolve().parents[1]
CNF = Path("servers/conf/mariadb.cnf")


def _append(path: Path, line: str) -> Callable[[Path], None]:
    def edit(clone: Path) -> None:
        target = clone / path
        target.write_text(target.read_text().rstrip("\n") + "\n" + line + "\n")

    return edit


def _replace(path: Path, old: str, new: str) -> Callable[[Path], None]:
    def edit(clone: Path) -> None:
        target = clone / path
        text = target.read_text()
        if old not in text:
            raise SystemExit(f"{path} has no {old!r} to change")
        target.write_text(text.replace(old, new))

    return edit


@dataclass(frozen=True)
class Change:
    kind: str
    what: str
    edits: tuple[Callable[[Path], None], ...]


CHANGES = (
    Change("durability", "innodb_flush_log_at_trx_commit = 1", (_append(CNF, "innodb_flush_log_at_trx_commit = 1"),)),
    Change(
        "buffer pool",
        "innodb_buffer_pool_size 512M -> 8M",
        (_replace(CNF, "innodb_buffer_pool_size = 512M", "innodb_buffer_pool_size = 8M"),),
    ),
    Change(
        "Lua file",
        "ycsb_b.lua: read 0.95 -> 0.90, update 0.05 -> 0.10",
        (_replace(Path("scenarios/lua/ycsb_b.lua"), "read = 0.95, update = 0.05", "read = 0.90, update = 0.10"),),
    ),
    Change(
        "server version",
        "mariadb-10.11.toml: image 10.11 -> 11.8",
        (
            _replace(
                Path("servers/mariadb-10.11.toml"), 'image = "dbperf/mariadb:10.11"', 'image = "dbperf/mariadb:11.8"'
            ),
            _replace(Path("servers/mariadb-10.11.toml"), 'version = "10.11"', 'version = "11.8"'),
        ),
    ),
    Change(
        "optimizer switch",
        "optimizer_switch = 'index_condition_pushdown=off'",
        (_append(CNF, "optimizer_switch = 'index_condition_pushdown=off'"),),
    ),
    Change("per-statement overhead", "performance_schema = ON", (_append(CNF, "performance_schema = ON"),)),
)


def branch(clone: Path, number: int, change: Change) -> None:
    git(clone, "checkout", "-q", "-B", f"change-{number}", "main")
    for edit in change.edits:
        edit(clone)
    git(clone, "commit", "-qam", f"{change.kind}: {change.what}")


def verdict(out: Path) -> str:
    """The check's decided rows, counted from its verdicts document (``out/verdicts.json``)."""
    path = out / "verdicts.json"
    if not path.is_file():
        return "no verdicts.json"
    doc = json.loads(path.read_text())
    states: dict[str, int] = {}
    for comparison in doc.get("verdicts", []):
        for row in comparison.get("metrics", []):
            state = str(row.get("outcome", "?"))
            states[state] = states.get(state, 0) + 1
    return ", ".join(f"{n} {state}" for state, n in sorted(states.items())) or "no rows"


def main() -> int:
    args, folder, chosen = arguments(
        __doc__, Path("/tmp/dbperf-change-kinds"), "change numbers (default: all six)", len(CHANGES)
    )
    store = seeded_store(folder / "store.duckdb", args.durations_from)
    clone = folder / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    git(clone, "checkout", "-q", "-B", "main")
    env = clone_env(clone, store)
    rows = []
    for number in chosen:
        change = CHANGES[number - 1]
        branch(clone, number, change)
        refs = ("--base", "main", "--head", "HEAD")
        planned = dbperf(clone, "ci", "plan", *refs, "--json", env=env)
        if planned.returncode != 0:
            print(f"change {number}: ci plan failed:\n{planned.stderr[-2000:]}", file=sys.stderr)
            continue
        doc = json.loads(planned.stdout)
        (folder / f"plan-{number}.json").write_text(planned.stdout)
        estimate = doc["estimate"]
        out = folder / f"out-{number}"
        done, actual, before = timed_ci_run(clone, refs, out, folder / f"run-{number}.log", env)
        picked: dict[str, set[str]] = {}
        for c in doc["comparisons"]:
            picked.setdefault(f"{c['scenario']} ({'+'.join(c['kinds'])})", set()).add(c.get("chosen") or c["reason"])
        sources = sorted({i["source"].split(" (")[0] for i in estimate["items"]})
        row = {
            "number": number,
            "kind": change.kind,
            "change": change.what,
            "comparisons": len(doc["comparisons"]),
            "servers": len({c["head_server"] for c in doc["comparisons"]}),
            "scenarios": {k: sorted(v) for k, v in picked.items()},
            "estimate_s": estimate["seconds"],
            "figures": "/".join(sources),
            "actual_s": round(actual),
            "ratio": round(actual / estimate["seconds"], 2) if estimate["seconds"] else None,
            "load": f"{before} -> {load()}",
            "exit": done.returncode,
            "verdicts": verdict(out),
        }
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    header = ("#", "kind", "change", "scenarios chosen (runs): why", "comparisons", "estimate", "figures", "real")
    results(folder, rows, (*header, "real/estimate", "exit", "load (1/5/15 min) before -> after"), lambda r: [
        r["number"], r["kind"], r["change"], "; ".join(f"{s}: {' / '.join(v)}" for s, v in r["scenarios"].items()),
        f"{r['comparisons']} on {r['servers']} server(s)", f"{r['estimate_s'] / 60:.1f} min", r["figures"],
        f"{r['actual_s'] / 60:.1f} min", r["ratio"], f"{r['exit']} ({r['verdicts']})", r["load"],
    ])  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
