"""An unmeasured cost run's price (harness/pipeline/cost_price.py): its events at the instructions the
scenario's committed cost baseline counts per transaction, scaled by the server family, plus a fixed part
per family (issue 33, item 3), the window stretched by the first repetition's cache simulation (x 2.3, spread
over the scenario's cost repetitions: 3 here, so x 1.4333). Every expected figure below is computed by hand
from the constants."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from harness.config.scenarios import load_scenario
from harness.config.servers import load_server
from harness.model import Scenario
from harness.pipeline import cost_price
from harness.pipeline.cost_price import cost_run_seconds, instructions_per_txn
from harness.pipeline.design_check import seconds_per_run

REPO = Path(__file__).resolve().parents[2]


def _baselines(tmp_path: Path, scenario: str, counts: list[float]) -> Path:
    """A baselines folder holding the committed point-select cost baseline with ``counts`` as its samples."""
    target = tmp_path / "baselines" / "cost" / "mariadb-local" / scenario / "quick" / "1t.json"
    target.parent.mkdir(parents=True)
    shutil.copy(REPO / "baselines/cost/mariadb-local/oltp_point_select/quick/1t.json", target)
    data = json.loads(target.read_text())
    data["samples"]["instr_per_txn"] = counts
    data["scenario"]["name"] = scenario
    target.write_text(json.dumps(data))
    return tmp_path / "baselines"


def _scenario(name: str, warmup: int, events: int) -> Scenario:
    found = load_scenario("oltp_point_select", REPO / "scenarios", "quick")
    cost = dataclasses.replace(found.cost, warmup_events=warmup, events=events)
    return dataclasses.replace(found, name=name, cost=cost)


def test_a_cost_run_is_priced_by_the_instructions_its_baseline_counts(tmp_path: Path) -> None:
    root = _baselines(tmp_path, "priced", [120_000.0, 100_000.0, 110_000.0])
    assert instructions_per_txn("priced", "mariadb", root) == 110_000.0  # the median of the three runs
    scenario = _scenario("priced", warmup=500, events=1000)
    # 4 s fixed + 500 x (0.7 ms + 110,000 x 3.5 ns) + 1,000 x (1.4 ms + 110,000 x 15 ns) x (1 + 1.3 / 3)
    # = 4 + 0.5425 + 3.05 x 1.4333 = 4 + 0.5425 + 4.371667
    assert cost_run_seconds(scenario, root=root) == pytest.approx(8.914167)
    local = load_server("mariadb-local", REPO / "servers")
    assert cost_run_seconds(scenario, local, root) == pytest.approx(8.914167)
    base_side = dataclasses.replace(scenario, name="priced@base")  # a plan's side of a changed scenario
    assert cost_run_seconds(base_side, local, root) == pytest.approx(8.914167)
    once = dataclasses.replace(scenario, cost=dataclasses.replace(scenario.cost, repetitions=1))
    assert cost_run_seconds(once, root=root) == pytest.approx(4 + 0.5425 + 3.05 * 2.3)  # every run simulates


def test_mysql_pays_its_start_and_prewarm_and_its_longer_transactions(tmp_path: Path) -> None:
    root = _baselines(tmp_path, "priced", [110_000.0])
    mysql = load_server("mysql-9.7", REPO / "servers")  # a container
    assert mysql.flavour == "mysql" and mysql.provider == "container"
    assert instructions_per_txn("priced", "mysql", root) == pytest.approx(137_500.0)  # 110,000 x 1.25
    # 13.5 s + 4.5 s (container) + 500 x (0.7 ms + 137,500 x 3.5 ns) + 1,000 x (1.4 ms + 137,500 x 15 ns) x 1.4333
    expected = 18 + 0.590625 + 3.4625 * (1 + 1.3 / 3)
    assert cost_run_seconds(_scenario("priced", 500, 1000), mysql, root) == pytest.approx(expected)


def test_a_scenario_without_a_committed_baseline_is_assumed_a_median_transaction(tmp_path: Path) -> None:
    assert instructions_per_txn("not_in_the_catalogue", "mariadb", tmp_path) == cost_price.ASSUMED_INSTR_PER_TXN
    # 4 s + 200 x (0.7 ms + 200,000 x 3.5 ns) + 100 x (1.4 ms + 200,000 x 15 ns) x 1.4333 = 4 + 0.28 + 0.6307
    expected = 4 + 0.28 + 0.44 * (1 + 1.3 / 3)
    assert cost_run_seconds(_scenario("not_in_the_catalogue", 200, 100), root=tmp_path) == pytest.approx(expected)


def test_the_catalogue_prices_a_heavy_transaction_above_a_light_one() -> None:
    """What the old flat rate per event could not tell: tpcc's 300 transactions against point_select's 1,000."""
    scenarios = REPO / "scenarios"
    tpcc, point = (load_scenario(name, scenarios, "quick") for name in ("tpcc", "oltp_point_select"))
    assert instructions_per_txn("tpcc", "mariadb") > 50 * instructions_per_txn("oltp_point_select", "mariadb")
    assert seconds_per_run(tpcc, "cost") > 2 * seconds_per_run(point, "cost")
    assert seconds_per_run(point, "cost") == 8  # 4 + 500 x 0.85 ms + 1,000 x 2.04 ms x 1.4333 = 7.35, rounded up
