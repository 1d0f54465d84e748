"""The capacity view of a thread sweep: p95 latency against throughput, one line per side and pair.

This is the picture people draw by hand from sysbench sweeps: each point is one run (one client count),
the lines join a side's client counts in order, and the dashed rule is the scenario's latency objective;
a side whose line crosses it later serves more clients within it (:mod:`harness.judge.capacity`).
"""

from __future__ import annotations

from typing import Any, Literal

from harness.model import Verdict
from harness.report.capacity_cells import side_cell
from harness.report.png import render_png


def capacity_spec(verdict: Verdict) -> dict[str, Any] | None:
    """Vega-Lite for one capacity verdict (a verdict with sweep curves); None for any other verdict."""
    import altair as alt

    if not verdict.curves or verdict.slo_p95_ms is None:
        return None

    def data(values: list[dict[str, Any]]) -> Any:
        return alt.Data(values=values)  # type: ignore[no-untyped-call]

    names = {"base": f"base: {verdict.base}", "head": f"head: {verdict.head}"}
    rows = [
        {"side": names[c.side], "pair": c.pair, "clients": p.threads, "qps": p.qps, "p95_ms": p.p95_ms}
        for c in verdict.curves
        for p in c.points
    ]
    colour = alt.Color(
        "side:N",
        title=None,
        scale=alt.Scale(domain=list(names.values()), range=["#1f77b4", "#ff7f0e"]),
        legend=alt.Legend(orient="bottom", labelLimit=0),
    )
    lines = (
        alt.Chart(data(rows))
        .mark_line(point=True, opacity=0.7)
        .encode(
            x=alt.X("qps:Q", title="throughput (QPS)", scale=alt.Scale(zero=False, padding=20)),
            y=alt.Y("p95_ms:Q", title="p95 latency (ms, log scale)", scale=alt.Scale(type="log")),
            color=colour,
            detail="pair:N",
            order="clients:Q",
            tooltip=["side:N", "pair:Q", "clients:Q", alt.Tooltip("qps:Q", format=",.0f"), "p95_ms:Q"],
        )
    )
    labels = (
        alt.Chart(data([r for r in rows if r["pair"] == 1]))
        .mark_text(dx=8, dy=-8, fontSize=10)
        .encode(x="qps:Q", y="p95_ms:Q", text="clients:Q", color=colour)
    )
    slo = (
        alt.Chart(data([{"slo": verdict.slo_p95_ms, "label": f"SLO p95 {verdict.slo_p95_ms:g} ms"}]))
        .mark_rule(strokeDash=[5, 4], color="#444")
        .encode(y="slo:Q", tooltip=["label:N"])
    )
    title = f"{verdict.scenario}: p95 against throughput, {verdict.threads_label} clients (labels: clients)"
    layered = alt.layer(lines, labels, slo).properties(
        width=520, height=300, title=alt.TitleParams(title, subtitle=_figures(verdict))
    )
    return dict(layered.to_dict())


def _figures(verdict: Verdict) -> list[str]:
    """One subtitle line per side: its median clients at the SLO, marked as the tables mark it."""
    lines = []
    sides: tuple[tuple[Literal["base", "head"], str], ...] = (("base", verdict.base), ("head", verdict.head))
    for side, name in sides:
        found = next((m for m in verdict.metrics if m.metric == "capacity_clients"), None)
        if found is None:
            continue
        lines.append(f"{side} {name}: clients at the SLO {side_cell(verdict, found, side)}")
    return lines


def capacity_png(verdict: Verdict) -> bytes | None:
    """The chart as a PNG (vl-convert, offline), or None for a verdict without sweep curves."""
    spec = capacity_spec(verdict)
    if spec is None:
        return None
    return render_png(spec, scale=1.5)
