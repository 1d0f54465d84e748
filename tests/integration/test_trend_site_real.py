"""The trend site from real runs (issue 34, item 7): real sysbench against the embedded MariaDB, timing
runs at two commits and a cost run under callgrind, ``dbperf trend``, then the page in headless
chromium at 1,400 px and on a 400 px phone (through an iframe: headless chromium lays out no narrower
than 500 px). Checked: the charts and the work vector are drawn with nothing logged, the grid takes three
columns wide and one on the phone, and the release view and the reading guide are on the page."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support import REPO
from support.browser import chromium, console_lines

pytestmark = [pytest.mark.integration, pytest.mark.browser]


def _small_cost(tmp_path: Path) -> Path:
    """The catalogue with oltp_point_select's cost runs cut to 100 + 300 transactions."""
    scenarios = tmp_path / "scenarios"
    shutil.copytree(REPO / "scenarios", scenarios)
    path = scenarios / "oltp_point_select.toml"
    text = re.sub(r"(?m)^warmup_events = \d+", "warmup_events = 100", path.read_text())
    path.write_text(re.sub(r"(?m)^events = \d+", "events = 300", text))
    return scenarios


@pytest.fixture(scope="module")
def site(dbperf, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("trend-real")
    store, scenarios = tmp / "dbperf.duckdb", _small_cost(tmp)
    common = ("-s", "oltp_point_select", "--server", "mariadb-local", "--store", store, "--scenarios-dir", scenarios)
    for commit in ("a" * 40, "b" * 40):  # two commits, named from outside (the caller vouches for the tree)
        env = {"DBPERF_GIT_SHA": commit}
        timed = dbperf.run("run", *common, "--no-cost", "--threads", "1,2", "--time", "2", "--warmup", "1",
                           "--repetitions", "1", env=env, timeout_s=600)  # fmt: skip
        assert timed.returncode == 0, timed.stderr[-2000:]
    cost = dbperf.run("run", *common, "--cost", "--repetitions", "1", env={"DBPERF_GIT_SHA": "b" * 40}, timeout_s=900)
    assert cost.returncode == 0, cost.stderr[-2000:]
    built = dbperf.run("trend", "--store", store, "--out", tmp / "site", timeout_s=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (tmp / "phone.html").write_text(
        '<!doctype html><meta charset="utf-8"><body style="margin:0">'
        '<iframe src="site/index.html" style="border:0;width:400px;height:3000px"></iframe>'
    )
    return tmp


def test_the_site_of_real_runs_draws_everything_at_1400_px(site: Path, tmp_path: Path) -> None:
    shown = chromium("--virtual-time-budget=15000", "--window-size=1400,2000", "--dump-dom",
                     (site / "site" / "index.html").as_uri(), profile=tmp_path / "p")  # fmt: skip
    dom = shown.stdout
    assert 'data-rendered="yes"' in dom, shown.stderr[-3000:]
    assert console_lines(shown.stderr) == []
    assert re.search(r'data-layout="3/\d+/\d+"', dom)  # three columns of charts
    work = dom.split('id="work"', 1)[1].split('id="releases"', 1)[0]
    assert "<svg" in work and "rows read/txn" in work  # the work vector, drawn from the cost run
    assert re.search(r"<table class=\"?release", dom) and "instructions/txn" in dom.split('id="releases"', 1)[1]
    assert "What each config hash stands for" in dom
    assert re.search(r"<svg[^>]*class=\"marks\"[^>]*width=\"(\d+)\"", dom)
    widths = [int(w) for w in re.findall(r'<svg[^>]*class="marks"[^>]*width="(\d+)"', dom)]
    assert widths and max(widths) <= 1400 - 2 * 24 - 38  # the grid and vega-embed's menu fit the page


def test_the_site_of_real_runs_is_one_column_on_a_phone(site: Path, tmp_path: Path) -> None:
    shown = chromium("--virtual-time-budget=15000", "--window-size=400,1500", "--dump-dom",
                     (site / "phone.html").as_uri(), profile=tmp_path / "p")  # fmt: skip
    assert console_lines(shown.stderr) == [], shown.stderr[-3000:]
    shot = tmp_path / "phone.png"
    chromium("--virtual-time-budget=15000", "--window-size=400,1500", f"--screenshot={shot}",
             (site / "phone.html").as_uri(), profile=tmp_path / "q")  # fmt: skip
    assert shot.exists() and shot.stat().st_size > 20_000  # charts, not a blank page
    frame = chromium("--virtual-time-budget=15000", "--window-size=400,1500", "--dump-dom",
                     (site / "site" / "index.html").as_uri(), profile=tmp_path / "r")  # fmt: skip
    # headless chromium lays the page out 500 px wide at least: still one column there
    assert re.search(r'data-layout="1/\d+/\d+"', frame.stdout), frame.stderr[-2000:]
