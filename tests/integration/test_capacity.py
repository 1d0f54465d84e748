"""Capacity at an SLO end to end: a real thread sweep of the embedded MariaDB against its thread-pool twin.

The verdict's outcome is a timing verdict on a shared machine and is not asserted (see
tests/unit/test_capacity.py for detection on seeded sweeps); what is asserted is its shape: one capacity
verdict over the sweep, every pair's curve on both sides with each run's QPS and p95, its two metrics
judged with an interval (4 pairs at alpha 0.2: the one gating test can reach it), the sweep's range in
the report, and the p95-against-throughput chart written.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


def test_a_thread_pool_sweep_gets_a_capacity_verdict_and_its_chart(dbperf, store_path, tmp_path):
    out_dir = tmp_path / "out"
    out = dbperf.run(
        "compare", "--no-cost", "--base", "mariadb-local", "--head", "mariadb-local-threadpool",
        "--scenario", "threadpool_select", "--profile", "quick", "--threads", "8,64", "--warmup", "0", "--time", "2",
        "--repetitions", "4", "--alpha", "0.2", "--gate-metric", "capacity_clients",
        "--store", store_path, "--out", out_dir, "--json", timeout_s=900,
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr[-3000:]
    doc = json.loads(out.stdout)
    (sweep,) = [v for v in doc["verdicts"] if v["curves"]]
    assert sweep["slo_p95_ms"] == 100 and sweep["threads"] == 64
    assert sorted((c["side"], c["pair"]) for c in sweep["curves"]) == sorted(
        (side, pair) for side in ("base", "head") for pair in range(1, 5)
    )
    for curve in sweep["curves"]:
        assert [p["threads"] for p in curve["points"]] == [8, 64]
        assert all(p["qps"] > 0 and p["p95_ms"] > 0 for p in curve["points"])
        assert curve["reached"] in {"within", "beyond", "below"} and curve["clients_at_slo"] > 0
    metrics = {m["metric"]: m for m in sweep["metrics"]}
    assert set(metrics) == {"capacity_clients", "capacity_qps"}
    assert metrics["capacity_clients"]["gating"] and not metrics["capacity_qps"]["gating"]  # as --gate-metric said
    for metric in metrics.values():
        assert metric["n_base"] == metric["n_head"] == 4
        low, estimate, high = metric["ci_low_pct"], metric["estimate_pct"], metric["ci_high_pct"]
        assert low is not None and low <= estimate <= high
    base_note = "capacity of mariadb-local (base) over 8,64 clients: "
    assert any(w.startswith(base_note) for w in sweep["warnings"]), (base_note, sweep["warnings"])
    report = (out_dir / "report.md").read_text()
    assert "| threadpool_select | 8-64 | clients at SLO |" in report
    (chart,) = out_dir.glob("capacity-threadpool_select-*.png")
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 5000
    assert f"]({chart.name})" in report
