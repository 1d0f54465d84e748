"""The per-operation protocol: DBPERF-OPS lines from real sysbench output, merged per type."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from harness.errors import LogParseError
from harness.model import LatencyBucket, OperationStats
from harness.model.metrics import split_operation
from harness.model.operation_stats import (
    bucket_index,
    bucket_value,
    is_operation_metric,
    merge_histograms,
    operation_metric,
)
from harness.sysbench.histogram import parse_histogram
from harness.sysbench.ops_protocol import parse_operations
from harness.sysbench.run_output import parse_output

DATA = Path(__file__).parent.parent / "data" / "sysbench"
PROBE = (DATA / "ops_protocol_probe.out").read_text().splitlines()


def test_threads_merge_into_one_record_per_type_counting_every_event():
    ops = parse_operations(PROBE, 2.0)
    assert [o.type for o in ops] == ["READ", "UPDATE"]
    events = int(re.search(r'"kind":"cumulative".*?"events":(\d+)', "\n".join(PROBE))[1])  # type: ignore[index]
    assert sum(o.count for o in ops) == events == 2000
    for op in ops:
        assert sum(b.count for b in op.histogram) == op.count
        assert op.errors == 0
        assert op.ops_per_s == pytest.approx(op.count / 2.0)
        assert op.p50_ms is not None and op.p99_ms is not None and op.p50_ms <= op.p99_ms
    read, update = ops
    assert 0.6 < read.count / events < 0.8  # the probe's 70/30 mix
    assert 0 < update.retries < update.count  # the probe retries about half its updates
    assert update.avg_ms is not None and read.avg_ms is not None


def test_histogram_values_are_sysbenchs_buckets():
    """sysbench's own --histogram values (3 decimals) are the protocol's bucket formula."""
    for bucket in parse_histogram(PROBE):
        assert round(bucket_value(bucket_index(bucket.value_ms)), 3) == pytest.approx(bucket.value_ms, abs=6e-4)
    assert bucket_index(0.001) == 0 and bucket_index(1e9) == 1023 and bucket_index(0) == 0


def test_merging_snaps_values_to_buckets_and_adds_counts():
    v = bucket_value(500)
    merged = merge_histograms([[(v, 2), (bucket_value(10), 1)], [(v * 1.0001, 3)]])
    assert merged == (LatencyBucket(bucket_value(10), 1), LatencyBucket(bucket_value(500), 5))


def test_a_malformed_line_names_its_line():
    lines = [*PROBE[:12], 'DBPERF-OPS {"thread":0,"ops":{"read":{"count":1}}}']
    with pytest.raises(LogParseError, match=r":13: .*upper case"):
        parse_operations(lines, 1.0)
    with pytest.raises(LogParseError, match="not a count"):
        parse_operations(['DBPERF-OPS {"thread":0,"ops":{"READ":{"count":-1}}}'], 1.0)
    with pytest.raises(LogParseError, match="expected DBPERF-OPS"):
        parse_operations(["DBPERF-OPS {not json"], 1.0)


def test_parse_output_carries_operations_and_fails_on_a_bad_line():
    text = "\n".join(PROBE)
    outcome = parse_output(text, warmup_s=0, exit_code=0, expected_s=0)
    assert outcome.failure is None and outcome.totals is not None
    assert sum(o.count for o in outcome.operations) == outcome.totals.events
    assert outcome.operations[0].seconds == outcome.totals.time_s
    bad = parse_output(text + '\nDBPERF-OPS {"ops": 3}', warmup_s=0, exit_code=0, expected_s=0)
    assert bad.failure is not None and bad.failure.kind == "protocol"


def test_output_without_the_protocol_has_no_operations():
    assert parse_operations(["SQL statistics:", "@dbperf {}"], 1.0) == ()


def test_metric_names():
    ops = parse_operations(PROBE, 4.0)
    assert split_operation("READ.p99_ms") == ("READ", "p99_ms")
    assert (
        split_operation("read.p99_ms") is None
        and split_operation("READ.nope") is None
        and split_operation("qps") is None
    )
    assert is_operation_metric("ops_per_s") and is_operation_metric("NEW_ORDER.ops_per_min")
    assert operation_metric(ops, "ops_per_s") == pytest.approx(500.0)
    assert operation_metric(ops, "UPDATE.ops_per_min") == pytest.approx(ops[1].count / 4.0 * 60)
    assert operation_metric(ops, "SCAN.p99_ms") is None
    assert operation_metric(ops, "READ.p99_ms") == ops[0].p99_ms


def test_record_validates():
    op = OperationStats("READ", 1, 0, 0, 1.0, 1.0)
    with pytest.raises(ValueError, match="upper case"):
        replace(op, type="Read")
    with pytest.raises(ValueError, match="negative"):
        replace(op, count=-1)
    assert op.p99_ms is None and op.avg_ms == 1.0 and not math.isnan(op.ops_per_s or 0)


def test_misses_add_up_over_threads_and_default_to_none():
    lines = [
        'DBPERF-OPS {"thread":0,"ops":{"READ":{"count":10,"misses":2,"hist":[]}}}',
        'DBPERF-OPS {"thread":1,"ops":{"READ":{"count":5,"misses":1,"hist":[]},"INSERT":{"count":3}}}',
    ]
    ops = {o.type: o for o in parse_operations(lines, 1.0)}
    assert ops["READ"].misses == 3 and ops["INSERT"].misses == 0
    with pytest.raises(LogParseError, match="not a count"):
        parse_operations(['DBPERF-OPS {"thread":0,"ops":{"READ":{"count":1,"misses":-1}}}'], 1.0)


def test_a_read_miss_fails_the_run_naming_the_operation_and_its_share():
    """A workload that read a record it never wrote measured something else (issue 37)."""
    text = "\n".join(PROBE)
    assert parse_output(text, warmup_s=0, exit_code=0, expected_s=0).failure is None
    # the probe's READ line with misses: the whole output is otherwise the same
    missed = re.sub(r'"READ":\{"count":(\d+),', r'"READ":{"count":\1,"misses":7,', text, count=1)
    outcome = parse_output(missed, warmup_s=0, exit_code=0, expected_s=0)
    assert outcome.failure is not None and outcome.failure.kind == "consistency"
    assert re.search(r"7 of [\d,]+ READ found no row", outcome.failure.message()), outcome.failure.message()
    assert "acknowledged" in outcome.failure.message()
