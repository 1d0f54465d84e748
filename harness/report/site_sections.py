"""The trend site's HTML sections beside the charts: how to read them (the legend explained, config hashes
included) and the release view (server versions side by side, timing and cost).

Everything here renders tables the history hands over (:class:`~harness.model.history.TrendData`); the
rows carry ``data-scenario`` so the page's script shows the selected scenario's rows only.
"""

from __future__ import annotations

import html
from collections import defaultdict
from typing import Any

from harness.model import metrics
from harness.model.history import TrendData
from harness.model.metrics import TREND_METRICS
from harness.report.charts import LOAD_NOTE
from harness.report.tables import fmt_value


def _esc(value: object) -> str:
    return html.escape(str(value))


def _ranks(data: TrendData) -> dict[str, int]:
    """Server version -> its place in natural version order (the history ranks them: 9.7 < 10.11 < 11.8)."""
    if "version_rank" not in data.versions.column_names:
        return {}
    versions = data.versions.column("server_version").to_pylist()
    return {str(v): int(r) for v, r in zip(versions, data.versions.column("version_rank").to_pylist(), strict=True)}


def reading_guide(data: TrendData) -> str:
    """What every mark, colour and label of the charts stands for, and what each config hash is."""
    items = [
        "<b>Colour</b>: one line per server (a file in <code>servers/</code>); with runs from several "
        "machines, <i>server · testbed</i> (CPU model, cores and the first 6 characters of the hardware "
        "fingerprint); series of different machines are never averaged.",
        "<b>Line and points</b>: the median of a commit's repetitions; <b>band</b>: their min-max; "
        "<b>dashed vertical rule</b>: a change point, with the change in %.",
        "<b>Faint, dashed, its own legend entry</b>: runs apart from their series: <i>one-off: variables</i> "
        "(<code>--head-var</code>), <i>uncommitted tree</i> (measured from a working tree with changes), "
        "<i>@base</i> (a pull request's base side: the base tree's scenario or server, drawn with the head's "
        "series it was compared with). Change points never look at them.",
        f"<b>{_esc(LOAD_NOTE.split(':', 1)[0].capitalize())}</b>:{_esc(LOAD_NOTE.split(':', 1)[1])}; such "
        "timing numbers are noisier and usually lower.",
        "<b>Server / config · a1b2c3d4</b> (scaling chart): a server run with more than one configuration; "
        "the 8 characters start its <b>config hash</b>, the hash of the server's effective variables as read "
        "back after it started (paths, ports and ids left out). A new hash under one server name means its "
        "settings changed: its file, its <code>my.cnf</code>, or a version with other defaults.",
        "<b>Instructions/txn</b> and the <b>work vector</b> come from cost runs (callgrind, deterministic to "
        "about 0.01 %): their axes are zoomed to the data; QPS and p95 axes start at 0.",
    ]
    return "<ul class=guide>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>" + _configs(data)


def _configs(data: TrendData) -> str:
    """One row per server x config hash: the versions, runs and dates behind it."""
    if data.versions.num_rows == 0 or "configs" not in data.versions.column_names:
        return ""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in data.versions.to_pylist():
        for config in str(row.get("configs") or "").split(", "):
            if not config:
                continue
            entry = found.setdefault((str(row["server"]), config), {"versions": set(), "n": 0, "first": "", "last": ""})
            entry["versions"].add(str(row["server_version"]))
            entry["n"] += int(row["n"] or 0)
            first, last = str(row.get("first_at") or ""), str(row.get("last_at") or "")
            entry["first"] = min(filter(None, (entry["first"], first)), default="")
            entry["last"] = max(entry["last"], last)
    rank = _ranks(data)
    rows = "".join(
        f"<tr><td>{_esc(server)}</td><td><code>{_esc(config[:8])}</code><span class=rest>{_esc(config[8:])}"
        f"</span></td><td>{_esc(', '.join(sorted(e['versions'], key=lambda v: rank.get(v, 0))))}</td>"
        f"<td class=num>{e['n']:,}</td>"
        f"<td>{_esc(e['first'][:10])} – {_esc(e['last'][:10])}</td></tr>"
        for (server, config), e in sorted(found.items())
    )
    head = "<tr><th>server</th><th>config hash</th><th>server versions</th><th>runs*</th><th>first – last</th></tr>"
    return (
        "<div class=scroll><table class=configs><caption>What each config hash stands for</caption>"
        f"<thead>{head}</thead><tbody>{rows}</tbody></table></div>"
        "<p class=meta>* runs counted once per scenario and thread count they measured.</p>"
    )


def release_view(data: TrendData) -> str:
    """Server versions side by side: per scenario x threads x metric, each server version's median over its
    committed runs and its change against the oldest version shown (timing: QPS and p95; cost: instructions
    per transaction). Rows of one-off configurations and uncommitted trees are left out."""
    if data.versions.num_rows == 0:
        return "<p>No runs.</p>"
    rows = [r for r in data.versions.to_pylist() if not r.get("oneoff")]
    rank = _ranks(data)
    columns = sorted(
        {(str(r["server_version"]), str(r["line"])) for r in rows}, key=lambda c: (rank.get(c[0], 0), c[1])
    )
    cells: dict[tuple[str, int, str], dict[tuple[str, str], tuple[float, int]]] = defaultdict(dict)
    for r in rows:
        for metric in TREND_METRICS:
            value = r.get(metric)
            if value is not None:
                cells[(str(r["scenario"]), int(r["threads"]), metric)][(str(r["server_version"]), str(r["line"]))] = (
                    float(value),
                    int(r["n"] or 0),
                )
    if not cells:
        return "<p>No runs.</p>"
    head = "".join(f"<th>{_esc(version)}<br><span class=server>{_esc(line)}</span></th>" for version, line in columns)
    body = []
    order = {m: i for i, m in enumerate(TREND_METRICS)}
    for (scenario, threads, metric), by_column in sorted(
        cells.items(), key=lambda kv: (kv[0][0], order[kv[0][2]], kv[0][1])
    ):
        first = next((by_column[c][0] for c in columns if c in by_column), None)
        tds = []
        for column in columns:
            if column not in by_column:
                tds.append("<td class=num>–</td>")
                continue
            value, n = by_column[column]
            change = ""
            if first and column != next(c for c in columns if c in by_column):
                change = f" <span class=change>{(value / first - 1.0) * 100.0:+.1f} %</span>"
            tds.append(f"<td class=num>{fmt_value(value)}{change}<br><span class=n>{n} runs</span></td>")
        label = metrics.label(metric)
        body.append(
            f"<tr data-scenario='{_esc(scenario)}'><td>{_esc(scenario)}</td><td class=num>{threads}</td>"
            f"<td>{_esc(label)} <span class=kind>({metrics.metric(metric).trend})</span></td>{''.join(tds)}</tr>"
        )
    return (
        "<div class=scroll><table class=release><thead><tr><th>scenario</th><th>threads</th><th>metric</th>"
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        "<p class=meta>Median over each version's runs (the box plots above show their spread); the change is "
        "against the leftmost version with a value, not a verdict: <code>dbperf compare --base A --head B</code> "
        "judges two servers in interleaved runs.</p>"
    )
