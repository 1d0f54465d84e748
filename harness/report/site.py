"""The trend site: ``dbperf trend --out DIR`` writes a static, self-contained chart page.

::

    DIR/index.html       the page: dropdowns (scenario, server, threads), QPS and p95 across commits
                         (median, min-max band, change points), by server version (box plots) and
                         against thread count (scaling), a table of change points, links to the images
    DIR/vega-bundle.js   Vega, Vega-Lite and vega-embed (``vl_convert.javascript_bundle()``), loaded
                         as a classic script, so the page works from disk, offline and on GitHub Pages
    DIR/changes.json     the change points, for scripts
    DIR/png/<scenario>-{trend,versions,scaling}.png
                         the same charts rendered offline by vl-convert, for PR comments and READMEs

The data is aggregated in DuckDB (:mod:`harness.store.trend_queries`) and inlined in the page, so no file
is fetched at view time (browsers refuse ``fetch`` from ``file://``).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import vl_convert

from harness.errors import ReportError
from harness.model import metrics
from harness.model.history import ChangeMark, TrendData
from harness.report.atomic_files import write_atomic
from harness.report.charts import Selection, dashboard_spec, spec_json
from harness.report.file_names import safe_stem
from harness.report.png import render_png
from harness.report.site_page import SCRIPT, STYLE
from harness.report.site_sections import reading_guide, release_view
from harness.report.tables import fmt_value
from harness.report.trend_images import image_specs
from harness.report.work_chart import work_spec

BUNDLE_FILE = "vega-bundle.js"
_EXPORTS = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"


@dataclass(frozen=True)
class SiteResult:
    """What :func:`build_site` wrote."""

    out_dir: Path
    index: Path
    images: tuple[Path, ...]
    runs: int
    points: int
    changes: tuple[ChangeMark, ...]
    seconds: float


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dbperf"


@lru_cache(maxsize=1)
def _bundle() -> str:
    """The Vega bundle; kept in ``~/.cache/dbperf`` because building it takes vl-convert 1-3 s."""
    version = getattr(vl_convert, "__version__", "unknown")
    cached = _cache_dir() / f"vega-bundle-{version}-{vl_convert.get_vega_embed_version()}.js"
    with contextlib.suppress(OSError):
        text = cached.read_text(encoding="utf-8")
        if "window.vegaEmbed" in text[-4000:]:  # complete (the bundle ends by exporting it)
            return text
    text = str(vl_convert.javascript_bundle(_EXPORTS))
    with contextlib.suppress(OSError):
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(cached)
    return text


def slug(name: str) -> str:
    """A file-name-safe form of a scenario name, distinct for distinct names (:mod:`harness.report.file_names`)."""
    return safe_stem(name)


def _write(path: Path, text: str) -> None:
    write_atomic(path, text)


def _changes_table(changes: tuple[ChangeMark, ...]) -> str:
    if not changes:
        return "<p>No change points found (E-divisive means, alpha 0.01, at least 3 commits per level).</p>"
    rows = []
    for c in changes:
        unit = " ms" if c.metric.endswith("_ms") else ""
        css = "worse" if (c.change_pct < 0) == (c.metric == "qps") else "better"
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (
                    c.scenario,
                    c.line or c.server,
                    c.threads,
                    metrics.label(c.metric),
                    c.point,
                    c.at,
                )
            )
            + f"<td class=num>{fmt_value(c.before)}{unit} → {fmt_value(c.after)}{unit}</td>"
            + f"<td class='num {css}'>{c.change_pct:+.1f} %</td>"
            + f"<td class=num>{c.confidence * 100:.1f} %</td></tr>"
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "scenario",
            "server",
            "threads",
            "metric",
            "commit / day",
            "first run",
            "level",
            "change",
            "confidence",
        )
    )
    return f"<table class=changes><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _images_list(out_dir: Path, images: tuple[Path, ...]) -> str:
    if not images:
        return "<p>Images were not exported (built with --no-images).</p>"
    items = "".join(
        f'<li><a href="{html.escape(p.relative_to(out_dir).as_posix())}">'
        f"{html.escape(p.relative_to(out_dir).as_posix())}</a></li>"
        for p in images
    )
    return f"<ul class=images>{items}</ul>"


def _page(
    title: str,
    data: TrendData,
    specs: tuple[dict[str, Any], dict[str, Any] | None],
    out_dir: Path,
    images: tuple[Path, ...],
) -> str:
    built = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    meta = (
        f"{data.runs:,} ok runs · {len(data.scenarios)} scenario(s) · {len(data.servers)} server(s) · "
        f"{data.points.num_rows:,} commit points · {len(data.changes)} change point(s) · built {built}"
    )
    spec, work = specs
    work_part = (
        '<h2 id="work-vector">Work vector</h2>\n<div id="work"></div>\n'
        f'<script type="application/json" id="dbperf-work-spec">{spec_json(work)}</script>\n'
        if work is not None
        else ""
    )
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{STYLE}</style>
<script src="{BUNDLE_FILE}"></script>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p class="meta">{html.escape(meta)}</p>
<div id="filters" aria-label="filters"></div>
<div id="vis"></div>
<p id="status" data-state="loading">Drawing charts…</p>
{work_part}<h2 id="releases">Releases: server versions side by side</h2>
{release_view(data)}
<h2 id="reading">Reading the charts</h2>
{reading_guide(data)}
<h2>Change points</h2>
<p class="meta">E-divisive means with a permutation test over the per-commit medians of each
scenario × server × threads series; the change is the shift between the means of the neighbouring
levels, the confidence is 1 − p.</p>
<div class=scroll>{_changes_table(data.changes)}</div>
<h2>Images</h2>
{_images_list(out_dir, images)}
<script type="application/json" id="dbperf-spec">{spec_json(spec)}</script>
<script>{SCRIPT}</script>
</body>
</html>
"""


def _render_images(data: TrendData, out_dir: Path, scale: float) -> tuple[Path, ...]:
    png_dir = out_dir / "png"
    with contextlib.suppress(OSError):  # a full disk is said by the first write_atomic, naming the file
        png_dir.mkdir(parents=True, exist_ok=True)
    specs = image_specs(data)
    names = [f"{slug(sel.scenario)}-{kind}" for sel, kind, _ in specs]
    jobs = [  # a scenario charted at two thread counts (timing and cost runs) names its images by threads
        (png_dir / (f"{name}-{sel.threads}t.png" if names.count(name) > 1 else f"{name}.png"), spec)
        for name, (sel, _, spec) in zip(names, specs, strict=True)
    ]
    written = []
    for path, spec in jobs:  # one at a time: vl-convert's renderer does not run two charts at once
        try:
            png = render_png(spec, scale=scale)
        except Exception as exc:  # vl-convert raises plain ValueError/RuntimeError
            raise ReportError(f"cannot render {path.name}: {exc}") from exc
        written.append(write_atomic(path, png))
    return tuple(written)


def build_site(
    data: TrendData,
    out_dir: Path,
    *,
    title: str = "dbperf trends",
    images: bool = True,
    scale: float = 1.0,
    validate: bool = False,
) -> SiteResult:
    """Build the site in ``out_dir`` from the history :func:`harness.pipeline.history` hands over.

    ``validate`` checks the page's spec against the Vega-Lite schema (the tests do; it costs 0.5 s).
    """
    started = time.perf_counter()
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"cannot create {out}: {exc}") from exc
    first = data.scenarios[0]
    selection = Selection(scenario=first, threads=data.default_threads(first))
    spec = dashboard_spec(data, selection, validate=validate)
    written = _render_images(data, out, scale) if images else ()
    _write(out / BUNDLE_FILE, _bundle())
    _write(out / "changes.json", json.dumps([c.as_dict() for c in data.changes], indent=2) + "\n")
    index = out / "index.html"
    _write(index, _page(title, data, (spec, work_spec(data, selection)), out, written))
    return SiteResult(
        out_dir=out,
        index=index,
        images=written,
        runs=data.runs,
        points=data.points.num_rows,
        changes=data.changes,
        seconds=time.perf_counter() - started,
    )
