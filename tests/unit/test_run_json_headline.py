"""``dbperf run --json`` carries each scenario's declared headline (tpcc: NOPM) beside the summary (issue 37)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support.factories import run
from support.reports import synthetic

from harness.cli.run_cmds import _headline


def test_tpcc_json_carries_nopm_with_its_label() -> None:
    new_order = synthetic("NEW_ORDER", 50.0, seed=1, count=600, seconds=60.0)
    tpcc = replace(
        run(25.0, threads=4),
        scenario="tpcc",
        operations=(new_order, synthetic("PAYMENT", 15.0, seed=2)),
        options={"headline": "NEW_ORDER.ops_per_min", "headline_label": "NOPM (tpmC-like, unaudited)"},
    )
    doc = _headline(tpcc)
    assert doc is not None
    assert doc["metric"] == "NEW_ORDER.ops_per_min" and doc["label"] == "NOPM (tpmC-like, unaudited)"
    assert doc["value"] == pytest.approx(new_order.ops_per_min)


def test_a_scenario_without_a_headline_has_none() -> None:
    assert _headline(run(10.0)) is None
