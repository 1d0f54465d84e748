"""Bencher Metric Format export: names, values, bounds, schema validation and a golden file.

Regenerate the golden file with ``DBPERF_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_bmf.py``.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from support.reports import make_run

from harness.errors import HarnessError
from harness.model import Metrics
from harness.report.bmf import BMF_SCHEMA, MEASURE_UNITS, MEASURES, to_bmf, validate_bmf, write_bmf

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden" / "bmf.json"
# Bencher's published BMF schema, copied unchanged into the repository, so a fresh clone checks against it
REFERENCE_SCHEMA = Path(__file__).resolve().parents[1] / "data" / "reference" / "bmf.schema.json"
UPDATE = os.environ.get("DBPERF_UPDATE_GOLDEN") == "1"


def reference_schema() -> dict[str, object]:
    """Bencher's reference schema (the package keeps its own copy)."""
    return json.loads(REFERENCE_SCHEMA.read_text())  # type: ignore[no-any-return]


def runs():
    out = []
    for server, base in (("mariadb-10.11", 20000.0), ("mariadb-11.8", 18500.0)):
        for threads in (8, 16):
            out += [
                make_run(i, server=server, threads=threads, qps=base + 100 * i + threads, p95=4.5 + 0.1 * i)
                for i in range(5)
            ]
    out.append(make_run(7, server="mariadb-11.8", threads=16, failure="FATAL: error 1040: Too many connections"))
    # a server without cost probes or a p99: those measures are left out for it
    bare = make_run(0, server="mysql-9.7", threads=8, qps=15000.0, p95=5.0)
    out.append(replace(bare, metrics=Metrics(qps=15000.0, tps=1000.0, p95_ms=5.0)))
    return out


def test_packaged_schema_is_benchers() -> None:
    assert reference_schema() == BMF_SCHEMA


def test_document_is_valid_against_the_reference_schema() -> None:
    doc = to_bmf(runs())
    jsonschema.validate(doc, reference_schema())
    validate_bmf(doc)


def test_golden(tmp_path: Path) -> None:
    path = tmp_path / "out" / "bmf.json"
    write_bmf(path, runs())
    text = path.read_text()
    if UPDATE:
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "regenerate with DBPERF_UPDATE_GOLDEN=1 if the change is intended"


def test_names_values_and_bounds() -> None:
    doc = to_bmf(runs())
    assert list(doc) == [
        "mariadb-10.11/oltp_read_only/ci/8t",
        "mariadb-10.11/oltp_read_only/ci/16t",
        "mariadb-11.8/oltp_read_only/ci/8t",
        "mariadb-11.8/oltp_read_only/ci/16t",
        "mysql-9.7/oltp_read_only/ci/8t",
    ]
    bench = doc["mariadb-11.8/oltp_read_only/ci/16t"]  # five ok runs; the failed one is left out
    assert bench["throughput"] == {"value": 18716.0, "lower_value": 18516.0, "upper_value": 18916.0}
    assert bench["p95-latency"] == {"value": 4.7, "lower_value": 4.5, "upper_value": 4.9}
    assert bench["p99-latency"]["value"] == pytest.approx(7.05)
    assert bench["cpu-per-txn"] == {"value": 212.0, "lower_value": 210.0, "upper_value": 214.0}
    assert bench["instructions-per-txn"]["value"] == 1236000.0
    assert set(doc["mysql-9.7/oltp_read_only/ci/8t"]) == {"throughput", "p95-latency"}
    assert set(MEASURES.values()) == set(MEASURE_UNITS)


def test_only_ok_runs_and_never_empty() -> None:
    failed = [make_run(0, failure="FATAL: error 2013"), make_run(1, failure="FATAL: error 2013")]
    with pytest.raises(HarnessError, match="none of the 2 run"):
        to_bmf(failed)


def test_mixed_versions_in_one_benchmark_are_refused() -> None:
    mixed = [make_run(0), replace(make_run(1), server_version="11.8.2-MariaDB")]
    with pytest.raises(HarnessError, match=r"mixes server versions 11\.8\.1-MariaDB, 11\.8\.2-MariaDB"):
        to_bmf(mixed)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"a/b/8t": {"throughput": {"lower_value": 1.0}}}, "'value' is a required property"),
        ({"a/b/8t": {"throughput": {"value": "fast"}}}, "is not of type 'number'"),
        ({"a/b/8t": {"throughput": {"value": float("nan")}}}, "NaN or infinity"),
        ([], "is not of type 'object'"),
    ],
)
def test_invalid_documents_raise_harness_error(doc: object, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        validate_bmf(doc)


def test_write_refuses_invalid_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.report.bmf as bmf

    monkeypatch.setattr(bmf, "to_bmf", lambda _runs: {"x": {"throughput": {"value": None}}})
    path = tmp_path / "bmf.json"
    with pytest.raises(HarnessError, match="not valid Bencher Metric Format at x/throughput/value"):
        bmf.write_bmf(path, runs())
    assert not path.exists()


def test_cost_runs_are_their_own_benchmarks():
    from support.factories import cost_run

    from harness.report.bmf import to_bmf

    doc = to_bmf([cost_run(42_000.0), cost_run(42_010.0)])
    assert list(doc) == ["mariadb-local/oltp_point_select/ci/1t/cost"]
    assert set(doc["mariadb-local/oltp_point_select/ci/1t/cost"]) == {"instructions-per-txn"}
    assert doc["mariadb-local/oltp_point_select/ci/1t/cost"]["instructions-per-txn"]["value"] == 42_005.0
