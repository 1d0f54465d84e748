"""A/A for the whole work vector: cost comparisons of a server against itself must never give a verdict.

    python benchmarks/work_aa.py [--comparisons 20] [--server mariadb-local] [--store aa.duckdb]
                                 [--scenarios oltp_point_select,oltp_read_write,oltp_insert,oltp_delete]

Each comparison is ``dbperf compare --cost --base S --head S --scenario X --json`` (3 cost runs a side,
each a fresh server under callgrind), taken round-robin over the scenarios, with instructions and every
gated work-vector component judged (weighted Holm, alpha 0.02). A regression or an improvement on a
gating metric is a false verdict (an inconclusive one is counted apart); the script prints each
comparison, the metrics that broke, and the counts
(issue 20: 0 false verdicts in 20). Information-only components are counted apart (they never gate).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from harness.model import RunResult


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--comparisons", type=int, default=20)
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("--store", default="")
    parser.add_argument("--scenarios", default="oltp_point_select,oltp_read_write,oltp_insert,oltp_delete")
    parser.add_argument("--rejudge", action="store_true", help="judge the stored A/A groups of --store again")
    args = parser.parse_args()
    if args.rejudge:
        return rejudge(Path(args.store))
    scenarios = args.scenarios.split(",")
    false_verdicts: Counter[str] = Counter()
    info_moves: Counter[str] = Counter()
    inconclusive: Counter[str] = Counter()
    done = 0
    for i in range(args.comparisons):
        scenario = scenarios[i % len(scenarios)]
        argv = [sys.executable, "-m", "harness", "compare", "--cost", "--base", args.server, "--head", args.server]
        argv += ["--scenario", scenario, "--json", "--seed", str(i + 1)]
        if args.store:
            argv += ["--store", args.store]
        started = time.monotonic()
        out = subprocess.run(argv, capture_output=True, text=True, check=False)
        try:
            document = json.loads(out.stdout)
        except json.JSONDecodeError:
            print(f"{i + 1:2d} {scenario}: no JSON (exit {out.returncode}): {out.stderr.strip()[-300:]}", flush=True)
            continue
        done += 1
        broke, undecided = [], []
        for verdict in document.get("verdicts", []):
            for m in verdict.get("metrics", []):
                if m.get("outcome") == "pass":
                    continue
                if not m.get("gating"):
                    info_moves[m["metric"]] += 1
                elif m.get("outcome") in ("regression", "improvement"):
                    broke.append(f"{m['metric']}={m['outcome']}")
                else:
                    undecided.append(f"{m['metric']}={m['outcome']}")
        outcome = "FALSE VERDICT" if broke else "inconclusive" if undecided else "pass"
        if broke:
            false_verdicts[scenario] += 1
        if undecided and not broke:
            inconclusive[scenario] += 1
        broke += undecided
        took = time.monotonic() - started
        print(f"{i + 1:2d} {scenario}: {outcome} {' '.join(broke)} ({took:.0f} s)", flush=True)
    print(
        f"comparisons run: {done} of {args.comparisons}; false verdicts (regression or improvement on a gating "
        f"metric): {sum(false_verdicts.values())}; inconclusive: {sum(inconclusive.values())}"
    )
    for scenario in scenarios:
        print(f"  {scenario}: {false_verdicts[scenario]} false, {inconclusive[scenario]} inconclusive")
    if info_moves:
        print(
            "information-only components that moved (never gating): "
            + ", ".join(f"{k} {v}" for k, v in info_moves.items())
        )
    return 1 if false_verdicts else 0


def rejudge(store: Path) -> int:
    """Judge every stored A/A comparison of ``store`` again with this dbperf's gate (same runs, current
    components, floors and weights)."""
    from harness.config.scenarios import load_scenario
    from harness.judge.gate import PairedCase, judge_pairs
    from harness.store.duckdb_file import Store

    runs = [r for r in Store(store).runs() if r.kind == "cost" and r.ok]
    groups: dict[str, list[RunResult]] = defaultdict(list)
    for run in runs:
        groups[run.group_id].append(run)
    false = 0
    for group, members in sorted(groups.items()):
        base = sorted((r for r in members if "(A/A)" not in r.server), key=lambda r: r.repetition)
        head = sorted((r for r in members if "(A/A)" in r.server), key=lambda r: r.repetition)
        scenario = load_scenario(members[0].scenario, Path("scenarios"), members[0].profile)
        case = PairedCase(scenario, members[0].threads, "base", "head", list(zip(base, head, strict=False)), "cost")
        (verdict,) = judge_pairs([case])
        broke = [f"{m.metric}={m.outcome}" for m in verdict.metrics if m.gating and m.outcome != "pass"]
        false += any(m.gating and m.outcome in ("regression", "improvement") for m in verdict.metrics)
        print(f"{group[-6:]} {members[0].scenario}: {verdict.outcome} {' '.join(broke)}")
    print(f"comparisons judged again: {len(groups)}; false verdicts: {false}")
    return 1 if false else 0


if __name__ == "__main__":
    sys.exit(main())
