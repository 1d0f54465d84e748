"""An installed wheel works outside the checkout: the catalogue (with its Lua scripts) travels inside
the package, and results go to the user's data folder instead of a ``results/`` wherever one stands.

The wheel is built from this checkout, installed with the pinned dependencies (requirements.lock,
from the offline wheelhouse of tools/workflow-test-deps.sh) into a fresh virtualenv in a temporary
folder, and run from another temporary folder with no pyproject.toml above it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def sh(*args: str | Path, cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel of this checkout and its locked dependencies; returns its bin/."""
    root = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DBPERF_", "PIP_", "VIRTUAL_ENV"))}
    deps = sh("bash", REPO / "tools" / "workflow-test-deps.sh", cwd=REPO, env=env)
    wheelhouse = deps.stdout.split()[1]
    offline = {**env, "PIP_FIND_LINKS": wheelhouse, "PIP_NO_INDEX": "1", "PIP_NO_COMPILE": "1"}
    wheel_argv = (sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", root / "dist", REPO)
    built = sh(*wheel_argv, cwd=root, env=offline)
    # the packaging configuration is complete: setuptools has nothing to warn about (it printed ~200 lines,
    # one block per catalogue folder "absent from the packages configuration")
    assert "Warning" not in built.stderr and "!!" not in built.stderr, built.stderr[-3000:]
    [wheel] = (root / "dist").glob("dbperf-*.whl")
    sh(Path(sys.base_prefix) / "bin" / "python3", "-m", "venv", root / "venv", cwd=root, env=env)
    pip = root / "venv" / "bin" / "pip"
    sh(pip, "install", "-q", "--require-hashes", "-r", REPO / "requirements.lock", cwd=root, env=offline)
    sh(pip, "install", "-q", "--no-deps", wheel, cwd=root, env=offline)
    return root / "venv" / "bin"


def test_installed_wheel_runs_the_packaged_catalogue_outside_a_checkout(
    installed: Path, tmp_path: Path, cache_dir: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBPERF_")}
    env.update({"XDG_DATA_HOME": str(data), "DBPERF_CACHE_DIR": str(cache_dir), "NO_COLOR": "1"})
    dbperf = installed / "dbperf"

    scenarios = json.loads(sh(dbperf, "scenarios", "--json", cwd=elsewhere, env=env).stdout)
    names = {s["name"] for s in scenarios}
    assert {"oltp_point_select", "cloud_mix", "oltp_read_write"} <= names
    servers = json.loads(sh(dbperf, "servers", "--json", cwd=elsewhere, env=env).stdout)
    local = next(s for s in servers if s["name"] == "mariadb-local")
    assert "/harness/catalogue/servers/conf/mariadb.cnf" in local["config_file"]

    # the committed cost baselines travel in the wheel and are found: a portable verdict anywhere
    baselines = json.loads(sh(dbperf, "baseline", "show", "--json", cwd=elsewhere, env=env).stdout)
    cost = [b for b in baselines if b["kind"] == "cost"]
    assert {(b["server"], b["scenario"], b["threads"]) for b in cost} >= {("mariadb-local", "oltp_point_select", 1)}
    assert all(Path(b["path"]).is_relative_to(data / "dbperf" / "baselines" / "cost") for b in cost), cost
    gated = subprocess.run(
        [dbperf, "gate", "--cost", "-s", "oltp_point_select", "--json"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert gated.returncode in (0, 1), gated.stderr[-3000:]
    (verdict,) = json.loads(gated.stdout)["verdicts"]
    (judged,) = [m for m in verdict["metrics"] if m["metric"] == "instr_per_txn"]
    assert judged["outcome"] in ("pass", "regression", "improvement", "inconclusive"), judged

    # a bundled script and the custom Lua one, measured for real on the local MariaDB
    done = sh(
        dbperf, "run", "-s", "oltp_point_select,cloud_mix", "--time", "2", "--warmup", "1", "--json",
        cwd=elsewhere, env=env,
    )  # fmt: skip
    runs = json.loads(done.stdout)
    assert [(r["scenario"], r["status"]) for r in runs] == [("oltp_point_select", "ok"), ("cloud_mix", "ok")]
    assert all(r["qps"] > 100 for r in runs)
    store = data / "dbperf" / "dbperf.duckdb"
    assert store.is_file(), list(data.rglob("*"))
    assert not (elsewhere / "results").exists()
    listed = json.loads(sh(dbperf, "runs", "--json", cwd=elsewhere, env=env).stdout)
    assert {r["run_id"] for r in runs} <= {r["run_id"] for r in listed}
    assert len(listed) == len(runs) + 3  # and the cost runs of the gate
