"""Can each design fail, and how likely is it to catch a change of the minimum effect? Before and after.

    python benchmarks/design_table.py

For the profiles' defaults and the documentation's examples: the gating tests, the smallest adjusted
p-value the worst of them can reach on its own under Holm (a design can return REGRESSION on every
gating metric only when it is below alpha 0.02), and each metric's power at its minimum effect at the
low and high ends of the noise measured on shared 2-core VMs (SD of per-pair log ratios: QPS 8-20 %,
p95 25-60 %, CPU/txn 4-9 %; cost 0.02-0.04 %). "Before" is the first wave's design (flat Holm over
qps, p95 and CPU/txn, the configured repetitions, no cost runs); "after" adds the cost test and lets
the design check raise the repetitions (harness.pipeline.design_check).
"""

from __future__ import annotations

from harness.judge import design
from harness.judge.power import power

ALPHA = 0.02
TIMING = ("qps", "p95_ms", "cpu_per_txn")
EFFECT = {"qps": 0.05, "p95_ms": 0.10, "cpu_per_txn": 0.05, "instr_per_txn": 0.005}
NOISE = {"qps": (0.08, 0.20), "p95_ms": (0.25, 0.60), "cpu_per_txn": (0.04, 0.09), "instr_per_txn": (0.0002, 0.0004)}


def family(comparisons: int, kind: design.Kind, n_base: int, n_head: int, cost: bool) -> list[design.TestDesign]:
    tests = [design.TestDesign(kind, n_base, n_head, f"c{c}", m) for c in range(comparisons) for m in TIMING]
    if cost:
        tests += [design.TestDesign("cost", 3, 3, f"c{c}", "instr_per_txn") for c in range(comparisons)]
    return tests


def row(label: str, tests: list[design.TestDesign], raise_: bool) -> str:
    check = design.attainable(tests, ALPHA)
    note = ""
    if raise_ and not check.ok:
        needed = design.repetitions_needed(tests, ALPHA)
        if needed is not None:
            tests = design.with_repetitions(tests, needed)
            check = design.attainable(tests, ALPHA)
            note = f" (raised to {needed})"
    worst = check.worst
    alone = worst.alone if worst else 1.0
    level = ALPHA / len(tests)
    powers = []
    for metric in (*TIMING, "instr_per_txn"):
        test = next((t for t in tests if t.metric == metric), None)
        if test is None:
            continue
        n: int | tuple[int, int] = test.n_base if test.kind == "signed-rank" else (test.n_base, test.n_head)
        lo, hi = (power(test.kind, n, sd, EFFECT[metric], level) for sd in NOISE[metric])
        powers.append(f"{metric} {lo:.2f}-{hi:.2f}")
    timing = next((t for t in tests if t.kind != "cost"), tests[0])
    reps = f"{timing.n_head} pairs" if timing.kind == "signed-rank" else f"{timing.n_base} + {timing.n_head}"
    return (
        f"| {label} | {reps}{note} | {len(tests)} | {alone:.3g} | {'yes' if alone < ALPHA else '**no**'} | "
        f"{'; '.join(powers)} |"
    )


def main() -> None:
    header = "| design | timing repetitions | gating tests | attainable adjusted p (worst, alone) | can fail |"
    print(header + " power at the minimum effect (low-high noise) |")
    print("| --- | --- | --- | --- | --- | --- |")
    cases = [
        ("pytest quick vs a quick baseline", 1, "rank-sum", 1, 1),
        ("README baseline mode (5 + 5)", 1, "rank-sum", 5, 5),
        ("compare, ci profile, 1 comparison", 1, "signed-rank", 10, 10),
        ("ci plan default (2 scenarios)", 2, "signed-rank", 10, 10),
        ("docs PR example (8 comparisons)", 8, "signed-rank", 10, 10),
    ]
    print("| **before** | | | | | |")
    for label, comparisons, kind, nb, nh in cases:
        print(row(label, family(comparisons, kind, nb, nh, cost=False), raise_=False))  # type: ignore[arg-type]
    print("| **after** (timing + cost, design check) | | | | | |")
    after = [
        ("pytest quick vs an 8-run baseline (README)", 1, "rank-sum", 8, 1),
        ("README baseline mode (8 + 8, forced)", 1, "rank-sum", 8, 8),
        ("compare, ci profile, 1 comparison", 1, "signed-rank", 10, 10),
        ("ci plan default (2 scenarios)", 2, "signed-rank", 10, 10),
        ("docs PR example (8 comparisons)", 8, "signed-rank", 10, 10),
    ]
    for label, comparisons, kind, nb, nh in after:
        print(row(label, family(comparisons, kind, nb, nh, cost=True), raise_=True))  # type: ignore[arg-type]
    print(
        "| pytest quick, no timing baseline, committed cost baseline | - | 1 | "
        f"{design.min_p_cost(3, 3):.3g} | yes | instr_per_txn "
        f"{power('cost', (3, 3), NOISE['instr_per_txn'][1], EFFECT['instr_per_txn'], ALPHA):.2f} |"
    )


if __name__ == "__main__":
    main()
