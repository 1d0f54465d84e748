"""`fresh_server = false` shares one server across the thread counts of a repetition; true does not."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.cli import dbperf_argv

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("fresh", "same_server"), [("false", True), ("true", False)])
def test_server_per_run_follows_fresh_server(
    repo: Path, cli_env: dict[str, str], tmp_path: Path, fresh: str, same_server: bool
):
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    text = (repo / "scenarios" / "oltp_point_select.toml").read_text()
    assert "fresh_server = true" in text
    (scenarios / "oltp_point_select.toml").write_text(text.replace("fresh_server = true", f"fresh_server = {fresh}"))
    shutil.copytree(repo / "scenarios" / "lua", scenarios / "lua")
    store = tmp_path / "s.duckdb"
    result = subprocess.run(
        [
            *dbperf_argv(),
            "run",
            "--scenario",
            "oltp_point_select",
            "--scenarios-dir",
            str(scenarios),
            "--threads",
            "1,2",
            "--time",
            "1",
            "--warmup",
            "0",
            "--store",
            str(store),
            "--json",
        ],
        cwd=repo,
        env=cli_env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    runs = json.loads(result.stdout)
    assert [r["threads"] for r in runs] == [1, 2]
    from harness.store import Store

    ports = {Store(store).get(r["run_id"]).variables["port"] for r in runs}
    assert (len(ports) == 1) is same_server
