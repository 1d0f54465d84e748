"""The trend site in a real browser: built from a DuckDB store, opened from disk in headless chromium.

Checks that the page draws its charts with no network (the Vega bundle is a local file), logs nothing
to the console, honours a selection in the URL, and keeps a screenshot: ``artifacts/trend.png`` (the CI
artifact) on every run, and ``docs/img/trend.png`` (checked in, used by the README) when it is missing
or ``DBPERF_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import html
import os
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from support.browser import CHROMIUM, chromium, console_lines
from support.factories import make_testbed

from harness import model
from harness.model import Metrics, RunResult, Totals
from harness.pipeline import history
from harness.report.site import build_site
from harness.store import Store

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TESTBED = make_testbed(
    cpu_model="AMD EPYC 7763 64-Core",
    cores=16,
    memory_gb=62.7,
    kernel="6.1.0-28-amd64",
    disk="nvme0n1 (ssd)",
    container_engine="docker 26.1.5",
    hostname="",
)
#: server: (flavour, versions over time, speed, thread-pool scaling)
TARGETS = {
    "mariadb-10.11": ("mariadb", ("10.11.9-MariaDB", "10.11.10-MariaDB"), 1.0, False),
    "mariadb-10.11-threadpool": ("mariadb", ("10.11.9-MariaDB", "10.11.10-MariaDB"), 0.97, True),
    "mariadb-11.8": ("mariadb", ("11.8.1-MariaDB", "11.8.2-MariaDB"), 1.05, False),
    "mysql-9.7": ("mysql", ("9.7.0",), 0.92, False),
}
SCENARIOS = {"oltp_point_select": 40000.0, "oltp_read_only": 9000.0}
THREADS = (1, 4, 16)
COMMITS = 24
STEP_AT = 12


def synthetic_history() -> list[RunResult]:
    """24 commits x 4 servers x 2 scenarios x 3 thread counts x 3 repetitions, with one known step:
    oltp_read_only on mariadb-11.8 loses 12 % QPS from commit 12 on."""
    rng = np.random.default_rng(5)
    t0 = datetime(2026, 2, 2, 1, 0, tzinfo=UTC)
    runs = []
    for c in range(COMMITS):
        sha = hashlib.sha1(f"c{c}".encode()).hexdigest()
        for server, (flavour, versions, speed, pool) in TARGETS.items():
            version = versions[min(len(versions) - 1, c * len(versions) // COMMITS)]
            for scenario, base in SCENARIOS.items():
                level = 0.88 if (server, scenario) == ("mariadb-11.8", "oltp_read_only") and c >= STEP_AT else 1.0
                for threads in THREADS:
                    knee = 64.0 if pool else 12.0
                    mean = base * speed * level * threads**0.85 / (1 + (threads / knee) ** 2)
                    for rep in range(3):
                        qps = float(mean * rng.lognormal(0, 0.02))
                        start = t0 + timedelta(hours=12 * c, seconds=len(runs))
                        runs.append(
                            RunResult(
                                run_id=f"r{len(runs):05d}",
                                started_at=start,
                                finished_at=start + timedelta(seconds=35),
                                status="ok",
                                server=server,
                                flavour=flavour,
                                provider="container",
                                server_version=version,
                                config_hash=hashlib.sha1(server.encode()).hexdigest()[:12],
                                scenario=scenario,
                                scenario_hash="s1",
                                profile="ci",
                                script=scenario,
                                threads=threads,
                                repetition=rep,
                                warmup_s=5.0,
                                time_s=30.0,
                                testbed=TESTBED,
                                git_sha=sha,
                                group_id=f"g{c}",
                                totals=Totals(30.0, int(qps * 2), int(qps * 30), 0, 0, 0, 0),
                                metrics=Metrics(qps=qps, tps=qps / 14, p95_ms=float(threads * 14000 / qps * 2.1)),
                            )
                        )
    return runs


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run tools/setup.sh --browser (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("trend")
    store = Store(tmp / "dbperf.duckdb")
    store.save_many(synthetic_history())
    result = build_site(history(store.metrics_table()), tmp / "site")
    assert {(c.scenario, c.server, c.metric) for c in result.changes} >= {("oltp_read_only", "mariadb-11.8", "qps")}
    assert len(result.images) == 2 * 3
    return result.out_dir


def test_page_draws_its_charts_offline_without_console_messages(site: Path, tmp_path: Path) -> None:
    url = (site / "index.html").as_uri()
    result = chromium("--virtual-time-budget=10000", "--dump-dom", url, profile=tmp_path / "profile")
    dom = result.stdout
    assert 'data-rendered="yes"' in dom, result.stderr[-3000:]
    assert 'id="status" data-state="rendered"' in dom
    assert console_lines(result.stderr) == []  # no errors, no warnings, nothing logged
    assert dom.count("<svg") >= 1
    marks = dict.fromkeys(("mark-line", "mark-area", "mark-rule", "mark-rect", "mark-symbol", "mark-text"), 0)
    for name in marks:
        marks[name] = len(re.findall(rf'<g class="{name} role-mark', dom))
    assert all(count > 0 for count in marks.values()), marks
    drawn = len(re.findall(r'role="graphics-symbol"', dom))
    assert drawn > 100, drawn  # points, boxes, whiskers, rules
    for name in ("sel_scenario", "sel_server", "sel_threads"):
        assert f'name="{name}"' in dom  # the dropdown filters
    assert "scenario=oltp_point_select&amp;server=all&amp;threads=16" in dom
    assert re.search(r"<td class=\"num worse\">-1[1-3]\.\d %</td>|<td class='num worse'>-1[1-3]\.\d %</td>", dom)


def _line_paths(dom: str) -> int:
    groups = re.findall(r'<g class="mark-line role-mark[^>]*>((?:<path[^>]*>(?:</path>)?)*)', dom)
    return sum(g.count("<path") for g in groups)


def test_selection_in_the_url_filters_every_chart(site: Path, tmp_path: Path) -> None:
    all_servers = chromium(
        "--virtual-time-budget=10000", "--dump-dom", (site / "index.html").as_uri(), profile=tmp_path / "a"
    )
    one = chromium(
        "--virtual-time-budget=10000",
        "--dump-dom",
        (site / "index.html").as_uri() + "#scenario=oltp_read_only&server=mariadb-11.8&threads=4",
        profile=tmp_path / "b",
    )
    assert "scenario=oltp_read_only&amp;server=mariadb-11.8&amp;threads=4" in one.stdout
    assert console_lines(one.stderr) == []
    # two trend charts and two scaling charts: one line per server each
    assert _line_paths(all_servers.stdout) == 4 * len(TARGETS)
    assert _line_paths(one.stdout) == 4


def test_screenshot_is_kept(site: Path, tmp_path: Path) -> None:
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    shot = artifacts / "trend.png"
    shot.unlink(missing_ok=True)
    url = (site / "index.html").as_uri() + "#scenario=oltp_read_only&server=all&threads=16"
    result = chromium(
        "--virtual-time-budget=10000", "--window-size=1280,1500", f"--screenshot={shot}", url, profile=tmp_path / "p"
    )
    assert shot.exists(), result.stderr[-3000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000  # a blank page is a few kB
    docs = ROOT / "docs" / "img" / "trend.png"
    if not docs.exists() or os.environ.get("DBPERF_UPDATE_GOLDEN") == "1":
        docs.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, docs)
    for image in sorted((site / "png").glob("*.png")):  # the exported images go to the artifacts too
        shutil.copyfile(image, artifacts / f"trend-{image.name}")


def test_one_off_runs_are_drawn_apart_with_whole_legend_labels(tmp_path: Path) -> None:
    """A ``--head-var`` head and an uncommitted tree on top of a committed history: in the browser, their
    own dashed series and legend entries (whole, never cut), filed under the server they modify, and
    nothing logged."""
    from harness.model.history import one_off_note, uncommitted_note

    committed = [r for r in synthetic_history() if r.scenario == "oltp_point_select" and r.threads == 16]
    committed = [r for r in committed if r.server in ("mariadb-11.8", "mysql-9.7")]
    last = max(committed, key=lambda r: r.started_at)
    variables = {"innodb_flush_log_at_trx_commit": "1", "innodb_buffer_pool_size": "268435456"}
    head = model.Server(name="mariadb-11.8", flavour="mariadb", version="11.8", provider="container")
    head = head.with_variables(variables)
    apart = [
        dataclasses.replace(
            last,
            run_id=f"apart-{i}-{rep}",
            server=server,
            notes=(note,),
            started_at=last.started_at + timedelta(hours=1 + i, minutes=rep),
            metrics=dataclasses.replace(last.metrics, qps=(last.metrics.qps or 0.0) * (0.7 + 0.1 * i)),
        )
        for i, (server, note) in enumerate(
            [(head.name, one_off_note(head.one_off)), ("mysql-9.7", uncommitted_note(last.git_sha))]
        )
        for rep in range(3)
    ]
    store = Store(tmp_path / "dbperf.duckdb")
    store.save_many(committed + apart)
    result = build_site(history(store.metrics_table()), tmp_path / "site", images=False)
    url = (result.index).as_uri() + "#scenario=oltp_point_select&server=all&threads=16"
    shown = chromium("--virtual-time-budget=10000", "--dump-dom", url, profile=tmp_path / "profile")
    dom = shown.stdout
    assert 'data-rendered="yes"' in dom, shown.stderr[-3000:]
    assert console_lines(shown.stderr) == []
    assert "…" not in dom  # no legend label cut at a pixel limit
    one_off = "mariadb-11.8 · one-off: innodb_buffer_pool_size=268435456,innodb_flush_log_at_trx_commit=1"
    assert one_off in html.unescape(re.sub(r"</tspan><tspan[^>]*>", "", dom))  # whole, maybe on two lines
    assert "mysql-9.7 · uncommitted tree" in html.unescape(dom)
    assert 'name="sel_server"' in dom and "mariadb-11.8+" not in dom.split("dbperf-spec")[0]  # filed under its server
    assert re.search(r'<path[^>]*stroke-dasharray="4,3"', dom)  # their own dashed series
    # the two committed lines, and the two drawn apart, in the trend charts (QPS, p95) and scaling charts
    assert _line_paths(dom) == 4 * 4
