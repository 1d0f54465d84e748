"""A scenario's own loader version (``[dataset] loader``): part of its snapshot key and cost identity, and the
snapshots of its earlier rows are named as outdated; scenarios that do not set it keep their keys."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.config.scenarios import DATASET_LOADER, load_scenario
from harness.dataset import DatasetCache

ROOT = Path(__file__).parents[2]
SCENARIOS = ROOT / "scenarios"


def _copy_tpcc(folder: Path, loader_line: str) -> Path:
    (folder / "lua").mkdir()
    for name in ("tpcc.lua", "dbperf_ops.lua"):
        shutil.copy(SCENARIOS / "lua" / name, folder / "lua" / name)
    text = (SCENARIOS / "tpcc.toml").read_text()
    assert "\nloader = 2 " in text  # tpcc's rows are at version 2: scaled year-to-date totals and last names
    (folder / "tpcc.toml").write_text(text.replace("\nloader = 2 ", f"\n{loader_line} "))
    return folder


def test_the_loader_version_joins_the_snapshot_key_and_the_cost_identity(tmp_path: Path) -> None:
    tpcc = load_scenario("tpcc", SCENARIOS, "quick")
    assert tpcc.dataset_loader == 2
    assert tpcc.dataset_key() == {"script": "lua/tpcc.lua", "tables": 1, "table_size": 10_000, "loader": 2}
    earlier = load_scenario("tpcc", _copy_tpcc(tmp_path, "loader = 1"), "quick")
    assert earlier.dataset_key() == {"script": "lua/tpcc.lua", "tables": 1, "table_size": 10_000}
    assert earlier.cost_hash != tpcc.cost_hash
    # a scenario that does not set it keeps the key it had
    point = load_scenario("oltp_point_select", SCENARIOS, "quick")
    assert point.dataset_loader == 1 and "loader" not in point.dataset_key()


def _snapshot(cache: Path, name: str, dataset: dict[str, object]) -> Path:
    folder = cache / "snapshots" / name
    folder.mkdir(parents=True)
    meta = {"key_parts": {"dataset": dataset, "loader": DATASET_LOADER, "format": 1}}
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def test_snapshots_of_a_scenarios_earlier_rows_are_outdated(tmp_path: Path) -> None:
    tpcc = load_scenario("tpcc", SCENARIOS, "quick")
    shape = {"script": "lua/tpcc.lua", "tables": 1, "table_size": 10_000}
    old = _snapshot(tmp_path, "mariadb-old", shape)
    _snapshot(tmp_path, "mariadb-new", {**shape, "loader": 2})
    _snapshot(tmp_path, "mariadb-other", {"script": "oltp_point_select", "tables": 2, "table_size": 10_000})
    cache = DatasetCache(tmp_path)
    assert cache.outdated(tpcc) == [old]
    assert cache.outdated() == []  # without the scenario only DATASET_LOADER tells
