"""The report of an A/B comparison over many scenarios (a release: ``dbperf compare --out DIR``).

``dbperf compare --base mariadb-10.11 --head mariadb-11.8 --scenario all --out release/`` writes::

    release/report.md       headline, the scenario x threads x metric table (change, interval, verdict),
                            the chart, then the full verdict table, warnings and testbed (report.markdown)
    release/changes.png     per scenario and thread count, each metric's change with its interval
                            (Altair, rendered offline by vl-convert, as the trend site does)
    release/changes.vl.json the chart's Vega-Lite spec
    release/verdicts.json   the verdict document (harness.model.verdict_document), as ``ci run`` writes it
    release/flamegraph-<scenario>-<threads>t.svg
                            per cost comparison, the differential flame graph (report.flame_svg)

The same writer serves ``dbperf judge --out`` (a stored comparison judged again).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.model import METRICS, Outcome, Verdict
from harness.model.flame_graph import FlameGraph
from harness.model.operation_stats import is_operation_metric
from harness.model.verdict_document import Check, document_of, dump_document
from harness.report.capacity_chart import capacity_png
from harness.report.change_cells import fmt_change, fmt_ci, fmt_level
from harness.report.file_names import file_name as safe_file_name
from harness.report.flame_svg import file_name, markdown_lines, render_svg
from harness.report.markdown import render_markdown
from harness.report.mdtable import cell
from harness.report.png import render_png
from harness.report.verdicts import OUTCOME_EMOJI, metric_label

#: Metric order of the table's columns and the chart's panels: the gateable metrics, in catalogue order.
METRIC_ORDER = tuple(METRICS)
FACET_COLUMNS = 3  # changes.png's panels per row: 3 x 220 px and the case labels stay under 2,000 px at 1.5x
_DASHES = ([1, 0], [4, 2], [1, 2], [6, 2])  # one stroke per interval level: solid, dashed, dotted, long
_COLOURS = {
    "regression": "#d62728",
    "improvement": "#2ca02c",
    "pass": "#7f7f7f",
    "inconclusive": "#ff7f0e",
}


def change_rows(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    """One row per scenario x threads x kind x metric with an estimate: what the table and chart show.

    A count's change is the count's own (:meth:`~harness.model.MetricVerdict.shown_change`); where its base
    is 0 it is per transaction, in a panel of its own (``... (change /txn)``). ``level`` is the interval's.
    """
    rows = []
    for v in sorted(verdicts, key=lambda v: (v.scenario, v.threads, v.kind)):
        for m in v.metrics:
            shown = m.shown_change()
            if shown.value is None:
                continue
            label = f"{v.scenario} {v.threads_label}t" + (" (cost)" if v.kind == "cost" else "")
            level = m.interval_level()
            rows.append(
                {
                    "case": label,
                    "scenario": v.scenario,
                    "threads": v.threads,
                    "kind": v.kind,
                    "metric": metric_label(m.metric) + (" (change /txn)" if shown.unit == "/txn" else ""),
                    "metric_key": m.metric,
                    "change": round(shown.value, 2),
                    "low": round(shown.low, 2) if shown.low is not None else round(shown.value, 2),
                    "high": round(shown.high, 2) if shown.high is not None else round(shown.value, 2),
                    "level": fmt_level(level) if level is not None else "no interval",
                    "outcome": m.outcome,
                    "gating": m.gating,
                    "cell": f"{fmt_change(m)} {fmt_ci(m)}",
                }
            )
    return rows


def _columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The metrics shown, in :data:`METRIC_ORDER`, then a workload's per-type ones (``NEW_ORDER.ops_per_min``)."""
    keys = {str(r["metric_key"]) for r in rows}
    return [m for m in METRIC_ORDER if m in keys] + sorted(k for k in keys if is_operation_metric(k))


def pivot_table(verdicts: Sequence[Verdict]) -> list[str]:
    """Markdown: one row per scenario x threads (x kind), one column per metric: change [interval] verdict."""
    rows = change_rows(verdicts)
    metrics = _columns(rows)
    cases: dict[str, dict[str, str]] = {}
    for r in rows:
        emoji = OUTCOME_EMOJI.get(r["outcome"], "")
        mark = "" if r["gating"] else " (info)"
        text = f"{emoji} {r['cell']}{mark}"
        cases.setdefault(r["case"], {})[r["metric_key"]] = text
    failed = [v for v in verdicts if v.outcome == "failed"]
    for v in failed:
        cases.setdefault(f"{v.scenario} {v.threads}t", {})["qps"] = "❌ failed"
    if not cases:
        return []
    header = ["scenario × threads", *(metric_label(m) for m in metrics)]
    lines = [
        "| " + " | ".join(header) + " |",
        "| :--- |" + " ---: |" * len(metrics),
    ]
    for case, values in cases.items():
        lines.append("| " + " | ".join([cell(case), *(cell(values.get(m, "-")) for m in metrics)]) + " |")
    return lines


def chart_spec(verdicts: Sequence[Verdict], title: str) -> dict[str, Any] | None:
    """Vega-Lite: per metric a panel, per scenario x threads a point at the change and its interval."""
    import altair as alt

    rows = change_rows(verdicts)
    if not rows:
        return None
    cases = list(dict.fromkeys(r["case"] for r in rows))  # by scenario, then threads as numbers
    metrics = [metric_label(m) for m in _columns(rows)]
    base = alt.Chart()  # the facet's data: each panel gets its metric's rows
    y = alt.Y("case:N", title=None, sort=cases)
    colour = alt.Color(
        "outcome:N",
        title="verdict",
        scale=alt.Scale(domain=list(_COLOURS), range=list(_COLOURS.values())),
        legend=alt.Legend(orient="bottom"),
    )
    levels = list(dict.fromkeys(str(r["level"]) for r in sorted(rows, key=lambda r: str(r["level"]))))
    title = "change, % (per transaction where marked /txn)"
    rule = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title=title),
        x2="high:Q",
        y=y,
        color=colour,
        strokeDash=alt.StrokeDash(
            "level:N",
            title="interval level",
            scale=alt.Scale(domain=levels, range=[_DASHES[i % len(_DASHES)] for i in range(len(levels))]),
            legend=alt.Legend(orient="bottom"),
        ),
    )
    point = base.mark_point(filled=True, size=50).encode(
        x="change:Q",
        y=y,
        color=colour,
        tooltip=["case:N", "metric:N", "change:Q", "low:Q", "high:Q", "level:N", "outcome:N"],
    )
    zero = alt.Chart(alt.Data(values=[{"zero": 0}])).mark_rule(color="#444", strokeDash=[3, 3]).encode(x="zero:Q")  # type: ignore[no-untyped-call]
    layered = alt.layer(zero, rule, point).properties(width=220, height=max(60, 18 * len(cases)))
    # panels wrap after FACET_COLUMNS: one row of a panel per metric was 8,629 px wide (harness.report.png)
    facet = alt.Facet("metric:N", title=None, sort=metrics)
    chart = layered.facet(facet=facet, columns=FACET_COLUMNS, data=alt.Data(values=rows))  # type: ignore[no-untyped-call]
    chart = chart.resolve_scale(x="independent").properties(title=title)
    return dict(chart.to_dict())


def write_release(
    out: Path, outcome: Outcome, *, seconds: float, title: str = "", flames: Sequence[FlameGraph] = ()
) -> Path:
    """report.md, changes.png (+ its spec), the flame graphs and verdicts.json in ``out``; returns the report's path.

    verdicts.json is the run's :class:`~harness.model.verdict_document.VerdictDocument`, and the report renders
    from that document (the outcome gives only the runs, the pair count and the notes)."""
    out.mkdir(parents=True, exist_ok=True)
    document = document_of(outcome, flame_graphs=tuple(file_name(graph) for graph in flames))
    verdicts = document.verdicts
    pairs = sorted({(v.base, v.head) for v in verdicts if v.mode == "ab"})
    heading = title or (
        "dbperf comparison: " + ", ".join(f"{b} → {h}" for b, h in pairs) if pairs else "dbperf comparison"
    )
    lines = [f"## {heading}", ""]
    table = pivot_table(verdicts)
    if table:
        scenarios = len({v.scenario for v in verdicts})
        lines += [
            f"{scenarios} scenario(s), {len(verdicts)} comparison(s) (scenario × threads × kind), "
            f"{outcome.pairs} pair(s) each, {len(outcome.runs)} runs in {seconds / 60:.1f} min.",
            "",
            "Change of head against base, with its interval (95 % unless the cell names its level; a count whose base "
            "is below its floor: its change per transaction); 🔴 regression, 🟢 improvement, "
            "✅ pass, 🟡 inconclusive; (info): a metric that does not gate.",
            "",
            *table,
            "",
        ]
    spec = chart_spec(verdicts, heading.removeprefix("dbperf comparison: "))
    if spec is not None:
        (out / "changes.vl.json").write_text(json.dumps(spec, indent=1) + "\n")
        (out / "changes.png").write_bytes(render_png(spec, scale=1.5))
        lines += ["![change of every metric, per scenario, with its interval (line style: its level)](changes.png)", ""]
    for verdict in verdicts:
        png = capacity_png(verdict)
        if png is not None:
            name = safe_file_name(
                f"{verdict.scenario}-{verdict.base}-{verdict.head}", prefix="capacity-", suffix=".png"
            )
            (out / name).write_bytes(png)
            lines += [f"![{verdict.scenario}: p95 against throughput per side]({name})", ""]
    for graph in flames:
        (out / file_name(graph)).write_text(render_svg(graph))
    lines += markdown_lines(flames)
    testbed = outcome.runs[0].testbed if outcome.runs else None
    check = Check(document, outcome.runs, "Verdicts", outcome.warnings)
    details = render_markdown(check, testbed=testbed)
    lines.append(details.replace("## Verdicts", "### Verdicts", 1))
    report = out / "report.md"
    report.write_text("\n".join(lines).rstrip() + "\n")
    (out / "verdicts.json").write_text(dump_document(document))
    return report
