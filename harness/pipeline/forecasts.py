"""Every cost comparison of an outcome gets its forecast of single-client time (docs/forecast.md).

The counts are the verdict's own medians (instructions and work vector per transaction, each side), the
L1i misses the median of the side's cost runs that simulated the caches (the first of each side:
harness.measure.cost), the statements per transaction the scenario's cost runs made, the unit times this
testbed's calibration (``dbperf calibrate``); where the stored timing runs of the scenario hold a thread
sweep, the forecast names the client counts where it stops holding. A forecast decides nothing unless the
``forecast-gate`` setting is on: then a forecast TPS drop beyond the scenario's QPS minimum effect, over its
whole interval, is a regression (exit 1).
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness.config.scenarios import load_scenario
from harness.config.settings import Settings
from harness.errors import HarnessError
from harness.judge.cost_forecast import SideWork, commit_syncs, forecast, holds_for
from harness.measure.calibration import load_calibration
from harness.model import RunResult, Testbed, Verdict
from harness.model.forecast import (
    ICACHE,
    ONE_CLIENT,
    QUERY_CACHE_CAVEAT,
    QUERY_CACHE_FILLED_CAVEAT,
    QUERY_CACHE_FILLED_NOTE,
    Calibration,
    OldCalibrationError,
    ServerUnits,
    query_cache_on,
)
from harness.model.outcome import EXIT_OK, EXIT_REGRESSION, Outcome

#: TPS by client count of a scenario on a server, from stored timing runs (empty: no sweep stored).
Sweeps = Callable[[str, str], Mapping[int, float]]

#: What a forecast against a baseline cannot see: a baseline keeps no L1i misses, so both sides get the head's.
BASELINE_FETCHES = "the baseline's code fetched (a baseline keeps no L1i misses: the head's count on both sides)"
NO_CALIBRATION = "no forecast: this testbed has no calibration; run `dbperf calibrate --server {server}` once"


def _work(verdict: Verdict, side: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in verdict.metrics:
        value = m.base_median if side == "base" else m.head_median
        if value is not None:
            out[m.metric] = value
    return out


def _runs(runs: Sequence[RunResult], verdict: Verdict, server: str) -> list[RunResult]:
    return [
        r
        for r in runs
        if r.kind == "cost" and r.ok and r.scenario == verdict.scenario and r.threads == verdict.threads
        if r.server == server
    ]


def _icache(runs: Sequence[RunResult]) -> dict[str, float]:
    """The L1i misses per transaction of the runs that simulated the caches (their median), {} without any."""
    found = [r.metrics.work[ICACHE] for r in runs if ICACHE in r.metrics.work]
    return {ICACHE: statistics.median(found)} if found else {}


def _statements(runs: Sequence[RunResult]) -> float | None:
    per = [r.totals.queries / r.totals.events for r in runs if r.totals is not None and r.totals.events > 0]
    return statistics.median(per) if per else None


def _commit_syncs(runs: Sequence[RunResult]) -> bool | None:
    found = {commit_syncs(r.variables) for r in runs}
    return found.pop() if len(found) == 1 else None


def _units(calibration: Calibration, runs: Sequence[RunResult], name: str) -> ServerUnits | None:
    build = next((r.build_id for r in runs if r.build_id), "")
    return calibration.for_server(runs[0].server if runs else name, build)


def _bound(settings: Settings, scenario: str) -> float:
    try:
        found = load_scenario(scenario, settings.scenarios_dir, settings.profile).min_effects.get("qps")
    except HarnessError:
        found = None
    return 100.0 * (found if found is not None else 0.05)


def forecast_verdict(
    verdict: Verdict, runs: Sequence[RunResult], calibration: Calibration, *, bound_pct: float, holds: str, gating: bool
) -> Verdict:
    """The verdict with its forecast, or with a warning saying why it has none."""
    head_runs = _runs(runs, verdict, verdict.head)
    base_runs = _runs(runs, verdict, verdict.base) or head_runs  # against a baseline: the same server
    head_units = _units(calibration, head_runs, verdict.head)
    base_units = _units(calibration, base_runs, verdict.base) if verdict.mode == "ab" else head_units
    statements = _statements([*base_runs, *head_runs])
    missing = next(
        (n for n, u in ((verdict.base, base_units), (verdict.head, head_units)) if u is None),
        None,
    )
    if missing is not None or base_units is None or head_units is None:
        server = (base_runs or head_runs)[0].server if (base_runs or head_runs) else missing
        note = f"no forecast: the calibration has no units for {missing}; run `dbperf calibrate --server {server}`"
        return dataclasses.replace(verdict, warnings=(*verdict.warnings, note))
    # against a baseline the base side's runs are not here: its L1i misses are taken as the head's (noted)
    base = {**_icache(base_runs if verdict.mode == "ab" else head_runs), **_work(verdict, "base")}
    head = {**_icache(head_runs), **_work(verdict, "head")}
    unseen = () if verdict.mode == "ab" or ICACHE not in head else (BASELINE_FETCHES,)
    caveat = _query_cache_caveat([*base_runs, *head_runs])
    if statements is None or "instr_per_txn" not in base or "instr_per_txn" not in head:
        return verdict
    if (base_units.icache_miss or head_units.icache_miss) and (ICACHE not in base or ICACHE not in head):
        note = (
            "no forecast: these cost runs did not count the code they fetched (instruction-cache misses, "
            "counted in a side's first cost run since store version 8), which the calibration prices; run the "
            "comparison again"
        )
        return dataclasses.replace(verdict, warnings=(*verdict.warnings, note))
    made = forecast(
        SideWork(base, statements, base_units, _commit_syncs(base_runs)),
        SideWork(head, statements, head_units, _commit_syncs(head_runs)),
        calibration,
        bound_pct=bound_pct,
        holds=holds,
        gating=gating,
        caveat=caveat,
        unseen=unseen,
    )
    return dataclasses.replace(verdict, forecast=made)


def _query_cache_caveat(runs: Sequence[RunResult]) -> str:
    """What a comparison's counts see of a query cache that is on: a warm cache's hits where its cost runs
    filled it with their window's keys (a read-only workload), only its overhead where they could not."""
    if not any(query_cache_on(r.variables) for r in runs):
        return ""
    cached = [r for r in runs if query_cache_on(r.variables)]
    filled = all(QUERY_CACHE_FILLED_NOTE in r.notes for r in cached)
    return QUERY_CACHE_FILLED_CAVEAT if filled else QUERY_CACHE_CAVEAT


def with_caveat(verdict: Verdict, runs: Sequence[RunResult]) -> Verdict:
    """A cost verdict that says what its counts cannot see of a query cache that is on: with fresh keys in
    the cost window (a write workload) only its overhead is counted (the verdict's sign may be wrong); with
    the window's keys asked before it, a warm cache's hits (a short run gains less)."""
    caveat = _query_cache_caveat([*_runs(runs, verdict, verdict.base), *_runs(runs, verdict, verdict.head)])
    if not caveat:
        return verdict
    note = f"cost verdict: {caveat}"
    return verdict if note in verdict.warnings else dataclasses.replace(verdict, warnings=(*verdict.warnings, note))


def stored_sweeps(settings: Settings, testbed: Testbed) -> Sweeps:
    """TPS by client count from the store's timing runs of this testbed and profile (median per count)."""

    def sweep(scenario: str, server: str) -> Mapping[int, float]:
        from harness.store import is_lake, open_store

        if is_lake(settings.store) or not Path(settings.store).exists():  # a shared lake is not opened again
            return {}
        try:
            store = open_store(settings.store)
        except HarnessError:
            return {}
        try:
            rows = store.metrics_table(scenario=scenario, server=server, status="ok").to_pylist()
        except HarnessError:
            return {}
        finally:
            store.close()
        by: dict[int, list[float]] = {}
        for row in rows:
            same = row["testbed_fingerprint"] == testbed.fingerprint and row["profile"] == settings.profile
            if row["kind"] == "time" and same and row["tps"]:
                by.setdefault(int(row["threads"]), []).append(float(row["tps"]))
        return {t: statistics.median(v) for t, v in by.items()}

    return sweep


def with_forecasts(outcome: Outcome, testbed: Testbed, settings: Settings, sweeps: Sweeps | None = None) -> Outcome:
    """The outcome with a forecast beside every cost comparison (see the module docstring)."""
    costs = [v for v in outcome.verdicts if v.kind == "cost" and v.outcome != "failed"]
    if not costs:
        return outcome
    outcome = dataclasses.replace(
        outcome,
        verdicts=tuple(
            with_caveat(v, outcome.runs) if v.kind == "cost" and v.outcome != "failed" else v for v in outcome.verdicts
        ),
    )
    try:
        calibration = load_calibration(settings.baselines_dir, testbed.fingerprint)
    except OldCalibrationError as exc:  # said once for the invocation; the comparison itself stands
        return dataclasses.replace(outcome, warnings=(*outcome.warnings, f"no forecast: {exc}"))
    if calibration is None:  # said once for the invocation, not on every cost verdict
        server = next((r.server for r in outcome.runs if r.kind == "cost"), settings.server)
        server = next((r.server for r in outcome.runs if r.kind == "cost" and r.label != "head"), server)
        # a side's label is no server file: mariadb-local@base, mariadb-local+x=1, mariadb-local(A/A)
        note = NO_CALIBRATION.format(server=re.split(r"[@+(]", server, maxsplit=1)[0] or settings.server)
        return dataclasses.replace(outcome, warnings=(*outcome.warnings, note))
    verdicts: list[Verdict] = []
    for v in outcome.verdicts:
        if v.kind != "cost" or v.outcome == "failed":
            verdicts.append(v)
        else:
            curve = sweeps(v.scenario, v.base) if sweeps is not None else {}
            verdicts.append(
                forecast_verdict(
                    v,
                    outcome.runs,
                    calibration,
                    bound_pct=_bound(settings, v.scenario),
                    holds=holds_for(curve) if curve else ONE_CLIENT,
                    gating=settings.forecast_gate,
                )
            )
    code = outcome.exit_code
    regressed = any(
        v.forecast is not None and v.forecast.gating and v.forecast.outcome == "regression" for v in verdicts
    )
    if regressed and code == EXIT_OK:
        code = EXIT_REGRESSION
    return dataclasses.replace(outcome, verdicts=tuple(verdicts), exit_code=code)
