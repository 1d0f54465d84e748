"""The forecast beside a cost verdict, and the calibration it came from: terminal, Markdown and comment.

Every line says "forecast" and never "measured": it is the work a cost comparison counted times this
runner's unit times, at one client (docs/forecast.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harness.model import Verdict
from harness.model.forecast import (
    ICACHE_TERM,
    ONE_CLIENT,
    QUERY_CACHE_CAVEAT,
    QUERY_CACHE_FILLED_CAVEAT,
    Calibration,
    Forecast,
    UnitTime,
)

LABEL = "forecast (from counts x this runner's calibration; not measured)"
EXPLAINED = (
    "A forecast multiplies each side's counted work per transaction (instructions, statements, syncs, page reads, "
    "writes) by this runner's calibrated unit times (`dbperf calibration show`): it is not a measurement, and it "
    "decides nothing unless the forecast-gate setting is on (docs/forecast.md)."
)


def _pct(value: float) -> str:
    return f"{value:+.1f} %"


def _us(value: float) -> str:
    return f"{value:+,.1f} µs" if abs(value) < 1000 else f"{value / 1000:+,.2f} ms"


def tps_text(f: Forecast) -> str:
    return f"{_pct(f.tps_pct)} [{_pct(f.tps_low_pct)}, {_pct(f.tps_high_pct)}]"


def latency_text(f: Forecast) -> str:
    return f"{_us(f.delta_us)} [{_us(f.delta_low_us)}, {_us(f.delta_high_us)}]"


def forecast_line(verdict: Verdict) -> str:
    """One line: the forecast of a cost comparison (empty without one)."""
    f = verdict.forecast
    if f is None:
        return ""
    decides = f"; decides the build: {f.outcome}" if f.gating else ""
    return (
        f"{verdict.scenario} {verdict.threads_label}t forecast, 1 client (not measured): TPS and QPS {tps_text(f)}, "
        f"latency and p95 {latency_text(f)} per transaction ({f.base_us:,.1f} -> {f.head_us:,.1f} µs){decides}; "
        f"{f.holds}" + (f"; {f.caveat}" if f.caveat else "")
    )


def forecast_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """The terminal's lines: one per cost comparison with a forecast."""
    return [line for v in verdicts if (line := forecast_line(v))]


def _count(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


def _terms_rows(f: Forecast) -> list[tuple[str, str, str, str, str]]:
    return [
        (t.component, _count(t.base_count), _count(t.head_count), f"{t.base_us:,.1f}", f"{t.head_us:,.1f}")
        for t in f.terms
    ]


def forecast_markdown(verdicts: Sequence[Verdict]) -> list[str]:
    """report.md's section: each cost comparison's forecast and the terms it sums (none without forecasts)."""
    shown = [v for v in verdicts if v.forecast is not None]
    if not shown:
        return []
    lines = [
        "### Forecast at 1 client (not measured)",
        "",
        "| scenario | base µs/txn | head µs/txn | TPS, QPS (forecast) | latency, p95 (forecast) | decides |",
        "|---|--:|--:|--:|--:|---|",
    ]
    for v in shown:
        f = v.forecast
        assert f is not None
        decides = f.outcome if f.gating else "no (information)"
        lines.append(
            f"| {v.scenario} {v.threads_label}t | {f.base_us:,.1f} | {f.head_us:,.1f} | {tps_text(f)} | "
            f"{latency_text(f)} | {decides} |"
        )
    lines += ["", f"<sub>{EXPLAINED}</sub>", ""]
    for v in shown:
        f = v.forecast
        assert f is not None
        lines += [
            f"<details><summary>{v.scenario} {v.threads_label}t: what the forecast sums</summary>",
            "",
            "| component | base /txn | head /txn | base µs | head µs |",
            "|---|--:|--:|--:|--:|",
            *(f"| {' | '.join(row)} |" for row in _terms_rows(f)),
            "",
            f"Where it holds: {f.holds}. Calibration: {f.calibrated}."
            + (f" {f.note}." if f.note else "")
            + (f" {f.caveat[0].upper()}{f.caveat[1:]}." if f.caveat else ""),
            "",
            "</details>",
            "",
        ]
    return lines


def forecast_comment(verdicts: Sequence[Verdict]) -> list[str]:
    """The pull-request comment's lines: one bullet per forecast (none without forecasts)."""
    shown = [v for v in verdicts if v.forecast is not None]
    if not shown:
        return []
    lines = ["**Forecast at 1 client** (from counts; not measured)", ""]
    for v in shown:
        f = v.forecast
        assert f is not None
        caveat = f" ({f.caveat})" if f.caveat else ""
        lines.append(
            f"- {v.scenario} {v.threads_label}t: TPS {tps_text(f)}, latency {latency_text(f)} per transaction{caveat}"
        )
    return [*lines, ""]


def _unit_row(u: UnitTime, scale: float = 1.0, unit: str = "µs") -> tuple[str, str, str, str, str]:
    def fmt(value: float) -> str:
        return f"{value * scale:,.3g} {unit}"

    return (
        u.name,
        fmt(u.value_us),
        f"{fmt(u.low_us)} - {fmt(u.high_us)}",
        f"{fmt(u.p50_us)} ({fmt(u.p5_us)} - {fmt(u.p95_us)})" if u.p50_us else "-",
        f"{u.samples}",
    )


def calibration_rows(calibration: Calibration) -> list[tuple[str, str, str, str, str]]:
    """Rows: unit, mean, range of batch means (the forecast's interval), median (5-95 %), samples."""
    rows = [_unit_row(u) for u in calibration.io]
    for s in calibration.servers:
        rows.append(_unit_row(s.instruction, 1000.0, "ns"))
        rows[-1] = (f"{s.server}: CPU per instruction", *rows[-1][1:])
        rows.append(_unit_row(s.cpu_statement))
        rows[-1] = (f"{s.server}: CPU per statement", *rows[-1][1:])
        rows.append(_unit_row(s.statement))
        rows[-1] = (f"{s.server}: per statement outside", *rows[-1][1:])
        if s.icache_miss is not None:
            rows.append(_unit_row(s.icache_miss, 1000.0, "ns"))
            rows[-1] = (f"{s.server}: CPU per L1i miss", *rows[-1][1:])
        if s.page_read is not None:
            rows.append(_unit_row(s.page_read))
            rows[-1] = (f"{s.server}: page read in the server", *rows[-1][1:])
    return rows


CALIBRATION_HEADER = ("unit", "mean", "range of batch means", "median (5-95 %)", "samples")


def calibration_notes(calibration: Calibration) -> list[str]:
    """What the calibration is, in lines under its table."""
    out = [
        f"testbed {calibration.testbed}, measured {calibration.measured_at} (load {calibration.load})",
        f"data folder {calibration.data_dir}; pages read {calibration.read_mode}; I/O measured on "
        + (f"CPUs {calibration.io_cpus} (the server's)" if calibration.io_cpus else "any CPU (not pinned)"),
    ]
    for s in calibration.servers:
        for w in s.scenarios:
            misses = f", {w.icache_per_txn:,.0f} L1i misses" if w.icache_per_txn is not None else ""
            out.append(
                f"{s.server} {s.version}, {w.scenario}: {w.instr_per_txn:,.0f} instructions{misses} and "
                f"{w.statements_per_txn:g} statements per transaction, {w.cpu_us:,.1f} µs server CPU of "
                f"{w.wall_us:,.1f} µs wall"
            )
        if s.fallback:
            out.append(f"{s.server}: FALLBACK, {s.fallback}")
        elif s.icache_miss is not None:
            out.append(
                f"{s.server}: server CPU per statement, per instruction and per L1i miss (a simulated 32 KiB "
                "instruction cache's: code fetched) solved from the scenarios above; per statement outside: "
                "wall time minus server CPU"
            )
        else:
            why = s.icache_note or "measured before dbperf calibrated it"
            out.append(
                f"{s.server}: server CPU per statement and per instruction solved from the first two scenarios "
                f"above, no price for code fetched ({why}); per statement outside: wall time minus server CPU"
            )
        if s.page_read is not None:
            out.append(f"{s.server}: page read in the server: {s.page_read.how}")
        else:
            why = s.page_read_note or "measured before dbperf calibrated it"
            out.append(f"{s.server}: no page read in the server ({why}): page reads are priced at the bare read")
    return out


_COMPONENTS = frozenset({"instructions", ICACHE_TERM, "statements", "syncs", "page reads", "writes"})


def checked_forecast(forecast: Forecast | None, where: str) -> Forecast | None:
    """A forecast read from an untrusted ``verdicts.json`` (its numbers already finite: read by
    :func:`harness.model.verdict_document.read_document`): components from a fixed set and no free text of the
    run's (where it holds is shown only when it is the model's own sentence); ``ValueError`` names the first
    field that is not what dbperf writes."""
    if forecast is None:
        return None
    if len(forecast.terms) > len(_COMPONENTS):
        raise ValueError(f"{where}.terms: a list of at most {len(_COMPONENTS)} terms is expected")
    for i, t in enumerate(forecast.terms):
        if t.component not in _COMPONENTS:
            raise ValueError(f"{where}.terms[{i}]: not a term dbperf writes")
    holds = ONE_CLIENT if forecast.holds == ONE_CLIENT else "where it holds: see the full report"
    caveat = forecast.caveat if forecast.caveat in {QUERY_CACHE_CAVEAT, QUERY_CACHE_FILLED_CAVEAT} else ""
    return dataclasses.replace(forecast, holds=holds, calibrated="", note="", caveat=caveat)
