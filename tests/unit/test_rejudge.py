"""``dbperf judge``: stored A/B groups and run sets judged again, with other judging settings, nothing run."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.factories import run

from harness.cli import main
from harness.model import RunResult
from harness.pipeline.rejudge import rebuild_pairs
from harness.store import Store

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def ab_group(
    group: str,
    pairs: int = 10,
    *,
    qps_change: float = -0.10,
    base: str = "mariadb-local@base",
    head: str = "mariadb-local",
) -> list[RunResult]:
    """``pairs`` interleaved pairs (ABBA...), each base and head run back to back; head QPS moved by ``qps_change``."""
    runs = []
    at = T0
    for n in range(1, pairs + 1):
        noise = 1 + 0.01 * ((n * 7) % 5 - 2)
        b = replace(run(10000.0 * noise, p95=1.0, cpu=50.0, server=base, threads=2, label="base"), repetition=n)
        h = replace(
            run(10000.0 * noise * (1 + qps_change), p95=1.0, cpu=50.0 / (1 + qps_change), server=head, threads=2),
            label="head",
            repetition=n,
        )
        for one in (b, h) if n % 2 else (h, b):
            at += timedelta(seconds=30)
            runs.append(replace(one, started_at=at, finished_at=at + timedelta(seconds=20), group_id=group))
    return runs


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    store = Store(tmp_path / "s.duckdb")
    store.save_many(ab_group("g1"))
    store.save_many(ab_group("g2", qps_change=0.0))
    return store.path


def judge(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, dict[str, object], str]:
    with pytest.raises(SystemExit) as done:
        main(["judge", "--store", str(store), "--json", *args])
    out = capsys.readouterr()
    return int(done.value.code or 0), json.loads(out.out), out.err


def metric(doc: dict[str, object], name: str) -> dict[str, object]:
    [verdict] = doc["verdicts"]  # type: ignore[misc]
    return next(m for m in verdict["metrics"] if m["metric"] == name)


def test_pairs_are_rebuilt_in_run_order() -> None:
    runs = ab_group("g", pairs=4) + ab_group("h", pairs=2, base="x@base", head="x")
    pairs = rebuild_pairs(runs)
    assert len(pairs) == 6
    assert all(b.label == "base" and h.label == "head" for b, h in pairs)
    assert all(b.repetition == h.repetition and b.group_id == h.group_id for b, h in pairs)


def test_a_stored_regression_is_judged_again(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code, doc, _ = judge(capsys, store_path, "--group", "g1")
    assert code == 1
    assert metric(doc, "qps")["outcome"] == "regression"
    assert doc["pairs"] == 10 and doc["selection"] == "group g1"


def test_judging_options_change_the_verdict(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    # a larger minimum effect: the 10 % drop no longer counts as a regression
    code, doc, _ = judge(capsys, store_path, "--group", "g1", "--min-effect", "qps=20%,cpu_per_txn=0.2")
    assert code == 0
    assert metric(doc, "qps")["outcome"] != "regression" and metric(doc, "qps")["bound_pct"] == 20.0
    # a metric gated now that was only recorded then: p99 (never gated by the scenario)
    code, doc, _ = judge(capsys, store_path, "--group", "g1", "--gate-metric", "p99_ms")
    assert code == 0 and metric(doc, "p99_ms")["gating"] and not metric(doc, "qps")["gating"]
    # an alpha so small that 10 pairs cannot reach it
    code, doc, _ = judge(capsys, store_path, "--group", "g1", "--alpha", "0.0001")
    assert code == 0 and metric(doc, "qps")["outcome"] == "inconclusive"


def test_no_change_and_strict(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code, doc, _ = judge(capsys, store_path, "--group", "g2")
    assert code == 0 and metric(doc, "qps")["outcome"] in ("pass", "inconclusive")


def test_baseline_mode_without_baselines_says_how_to_record(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    code, doc, _ = judge(
        capsys, store_path, "--group", "g1", "--mode", "baseline", "--baselines-dir", str(tmp_path / "none")
    )
    assert code == 0
    outcomes = {m["outcome"] for v in doc["verdicts"] for m in v["metrics"]}  # type: ignore[attr-defined]
    assert outcomes == {"no_baseline"}


def test_a_group_without_pairs_is_one_line_error(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    plain = Store(tmp_path / "plain.duckdb")
    plain.save(replace(run(1000.0), group_id="solo"))
    with pytest.raises(SystemExit) as done:
        main(["judge", "--store", str(plain.path), "--mode", "ab"])
    assert done.value.code == 2
    assert "no A/B pairs among these runs" in capsys.readouterr().err
    del store_path
