"""Is each scenario's cost warm-up long enough? Instructions per transaction after W and after 4W warm-up
transactions, on fresh servers, compared with the noise a deterministic count may have.

    python benchmarks/warmup_steady.py [--scenario oltp_point_select ...] [--server mariadb-local]
                                       [--profile quick] [--repetitions 3] [--steps 2] [--store S]

For each catalogue scenario (cost mode, 1 client thread, the scenario's own measured ``events`` and seeds:
the measured window never replays the warm-up's statements), W is the scenario's ``[cost] warmup_events``.
Each length runs ``--repetitions`` times, each on a fresh server under callgrind. The two lengths agree
when the change of the mean count from W to 4W is within the ceiling a deterministic count may vary by,
a quarter of the scenario's ``instr_per_txn`` minimum effect (0.125 % for 0.5 %; the cost test's
``DEFAULT_CEILING_RATIO``): a longer warm-up then moves the count less than the judge's own tolerance.
When they do not agree and ``--steps`` allows, 4W is compared with 16W, and so on: the first length that
agrees with four times itself is the one to set as ``warmup_events``. The CV of each length is printed
too (a scenario's ``events`` should keep it under 0.1 %).

Counts do not depend on the machine's load; the seconds per run printed do.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from harness import pipeline
from harness.config.scenarios import available_scenarios
from harness.config.settings import resolve_settings
from harness.judge.stats import DEFAULT_CEILING_RATIO, coefficient_of_variation
from harness.measure.session import QuietReporter, Session


@dataclass(frozen=True)
class Length:
    """The cost runs of one warm-up length."""

    warmup: int
    values: tuple[float, ...]
    seconds_per_run: float

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def cv_pct(self) -> float:
        return coefficient_of_variation(self.values) * 100 if len(self.values) > 1 else float("nan")


def measure(session: Session, case: pipeline.Case, warmup: int, repetitions: int) -> Length:
    cost = replace(case.scenario.cost, threads=(1,), warmup_events=warmup, repetitions=repetitions)
    scenario = replace(case.scenario, cost=cost)
    started = time.monotonic()
    runs = pipeline.measure_case(session, pipeline.Case(case.server, scenario), kind="cost")
    seconds = (time.monotonic() - started) / max(1, len(runs))
    values = tuple(r.metrics.instr_per_txn for r in runs if r.ok and r.metrics.instr_per_txn)
    if len(values) < len(runs):
        failed = next(r for r in runs if not r.ok)
        raise SystemExit(f"{case.scenario.name} at warm-up {warmup}: a cost run failed: {failed.failure[:200]}")
    return Length(warmup, values, seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", action="append", help="scenario (repeatable; default: the catalogue)")
    parser.add_argument("--server", default="mariadb-local")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--repetitions", type=int, default=3, help="fresh-server runs per warm-up length")
    parser.add_argument("--steps", type=int, default=2, help="how many times to multiply W by 4 at most")
    parser.add_argument("--scenarios-dir", default="scenarios")
    parser.add_argument("--store", help="keep the runs (and their profiles) in this store (default: a temporary one)")
    args = parser.parse_args()

    store = args.store or str(Path(tempfile.mkdtemp(prefix="dbperf-warmup-bench-")) / "store.duckdb")
    settings = resolve_settings(
        {
            "store": store,
            "profile": args.profile,
            "cost": True,
            "scenarios_dir": args.scenarios_dir,
        }
    )
    names = args.scenario or available_scenarios(Path(args.scenarios_dir))
    first = pipeline.resolve(settings, names[0], args.server)
    session = pipeline.open_session(settings, QuietReporter(), containers=first.server.provider == "container")

    print(
        f"{args.server}, profile {args.profile}, 1 thread, {args.repetitions} fresh servers per warm-up length; "
        f"store {store}"
    )
    head = (
        f"{'scenario':<24} {'events':>6} {'W':>6} {'Ir/txn at W':>13} {'CV':>7} {'4W':>6} {'Ir/txn at 4W':>13} "
        f"{'CV':>7} {'change':>9} {'ceiling':>8} {'s/run':>6}  verdict"
    )
    print(head, flush=True)
    for name in names:
        case = pipeline.resolve(settings, name, args.server)
        ceiling = case.scenario.min_effects.get("instr_per_txn", 0.005) * DEFAULT_CEILING_RATIO * 100
        short = measure(session, case, case.scenario.cost.warmup_events, args.repetitions)
        for step in range(args.steps):
            long = measure(session, case, max(1, short.warmup) * 4, args.repetitions)
            change = (long.mean / short.mean - 1) * 100
            steady = abs(change) <= ceiling
            print(
                f"{name:<24} {case.scenario.cost.events:>6} {short.warmup:>6} {short.mean:>13,.0f} "
                f"{short.cv_pct:>6.3f}% {long.warmup:>6} {long.mean:>13,.0f} {long.cv_pct:>6.3f}% "
                f"{change:>+8.3f}% {ceiling:>7.3f}% {long.seconds_per_run:>6.1f}  "
                + (
                    f"steady at W={short.warmup}"
                    if steady
                    else "NOT steady" + (": trying 4x" if step + 1 < args.steps else "")
                ),
                flush=True,
            )
            if steady:
                break
            short = long
    return 0


if __name__ == "__main__":
    sys.exit(main())
