"""Bencher Metric Format (BMF) export: ``dbperf export bmf --out results.json``.

One benchmark per ``<server>/<scenario>/<profile>/<threads>t`` (the server's name; the version is
what Bencher's branch and commit track; cost runs as ``.../cost``), built from the **ok** runs only
(failed runs are left out: a failed run has no meaningful numbers, and the gate reports it). Measures:

=========================  ==========================================  ==============================
measure                    value                                       unit
=========================  ==========================================  ==============================
``throughput``             median QPS over the repetitions              queries per second (built in)
``p95-latency``            median of the runs' p95                      milliseconds
``p99-latency``            median of the runs' p99 (when measured)      milliseconds
``cpu-per-txn``            median server CPU time per transaction       microseconds
``instructions-per-txn``   median server instructions per transaction   instructions
                           (a cost benchmark's only measure)
=========================  ==========================================  ==============================

A workload that reports operation types (YCSB, TPC-C: the per-operation protocol) adds one benchmark
per type, ``<benchmark>/op/<TYPE>`` (e.g. ``mariadb-local/ycsb_a/ci/8t/op/READ``), with
``throughput`` in operations per second and that type's ``p95-latency`` and ``p99-latency``.

``lower_value`` and ``upper_value`` are the **minimum and maximum over the repetitions** (not a
confidence interval): with the handful of repetitions a benchmark run has (3-12), a distribution-free
95 % interval of the median is at least as wide as the range anyway, and the range is exact and easy
to check by hand. With a single repetition the three values coincide. Values are rounded to 6
decimals.

Bencher uses ``value`` alone for its thresholds (one new value against the branch history) and
ignores unknown keys; a malformed file gives "no results" rather than an error, so every document
is validated against :data:`BMF_SCHEMA` (a copy of Bencher's published schema) before it is written.

Sending it (on a runner with the Bencher CLI)::

    dbperf export bmf --out bmf.json
    bencher run --adapter json --file bmf.json --project dbperf --branch main \\
        --testbed bench-01 --threshold-measure throughput --threshold-test t_test \\
        --threshold-max-sample-size 64 --threshold-lower-boundary 0.99 --err

Create the non-built-in measures once, with their units (``p95-latency`` and ``p99-latency`` in
milliseconds, ``cpu-per-txn`` in microseconds, ``instructions-per-txn`` in instructions); Bencher
would otherwise create them on first use without units. Throughput gets a *lower* boundary (lower is
worse), latency and cost measures an *upper* one.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema

from harness.errors import ReportError
from harness.model import RunResult
from harness.model.metrics import CATALOGUE
from harness.report.atomic_files import write_atomic

#: Bencher's BMF JSON schema (``https://bencher.dev/bmf.json``), kept in the package so that export
#: works offline; tests/unit/test_bmf.py checks it against the reference copy.
BMF_SCHEMA: dict[str, Any] = {
    "$id": "https://bencher.dev/bmf.json",
    "$schema": "http://json-schema.org/draft-07/schema",
    "title": "Bencher Metric Format",
    "type": "object",
    "patternProperties": {
        ".+": {
            "type": "object",
            "patternProperties": {
                ".+": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "lower_value": {"type": "number"},
                        "upper_value": {"type": "number"},
                    },
                    "required": ["value"],
                }
            },
        }
    },
}

#: BMF measure name for each dbperf metric, in the order they are written (the catalogue's ``bmf``).
MEASURES: dict[str, str] = {m.name: m.bmf for m in CATALOGUE if m.bmf and m.store_column}

#: Units of each measure (for ``bencher measure create``).
MEASURE_UNITS: dict[str, str] = {m.bmf: m.bmf_unit for m in CATALOGUE if m.bmf and m.store_column}


def benchmark_name(run: RunResult) -> str:
    """``<server>/<scenario>/<profile>/<threads>t``, and ``.../cost`` for cost runs.

    The profile is part of the name because each profile is a different workload (dataset, durations,
    thread counts): the ``ci`` runs of pushes and the ``full`` runs of the nightly must never share a
    series. Cost runs (callgrind) are their own benchmarks: their instruction counts are not comparable
    with the hardware counters of timing runs.
    """
    name = f"{run.server}/{run.scenario}/{run.profile or 'default'}/{run.threads}t"
    return f"{name}/cost" if run.kind == "cost" else name


def _round(value: float) -> float:
    return round(float(value), 6) + 0.0


def to_bmf(runs: Sequence[RunResult]) -> dict[str, dict[str, dict[str, float]]]:
    """The BMF document of the ok runs (see the module docstring for names, values and bounds).

    Raises :class:`HarnessError` when no run is ok, or when one benchmark mixes server versions
    (their median would describe no server: export one group or filter by server).
    """
    groups: dict[str, list[RunResult]] = defaultdict(list)
    for run in sorted(runs, key=lambda r: (r.server, r.scenario, r.profile, r.kind, r.threads)):
        if run.ok:
            groups[benchmark_name(run)].append(run)
    if not groups:
        raise ReportError(f"nothing to export: none of the {len(runs)} run(s) is ok (failed runs are not exported)")
    doc: dict[str, dict[str, dict[str, float]]] = {}
    for name, members in groups.items():  # by server, scenario, profile, kind and thread count (as a number)
        versions = sorted({r.server_version for r in members if r.server_version})
        if len(versions) > 1:
            raise ReportError(
                f"benchmark {name} mixes server versions {', '.join(versions)}: export one group "
                "(--group) or filter the runs so each benchmark holds one version"
            )
        measures: dict[str, dict[str, float]] = {}
        for metric, measure in MEASURES.items():
            values = [v for r in members if (v := r.metrics.get(metric)) is not None and math.isfinite(v)]
            if not values:
                continue
            measures[measure] = {
                "value": _round(statistics.median(values)),
                "lower_value": _round(min(values)),
                "upper_value": _round(max(values)),
            }
        if "throughput" not in measures and members[0].kind != "cost":
            raise ReportError(f"benchmark {name}: ok timing runs without QPS cannot be exported")
        if not measures:
            raise ReportError(f"benchmark {name}: ok runs without any measure cannot be exported")
        doc[name] = measures
        doc.update(operation_benchmarks(name, members))
    return doc


# --- per-operation benchmarks (issue 22) ---------------------------------------------------------------
#: BMF measure of each per-operation field (throughput is operations per second here).
OPERATION_MEASURES: dict[str, str] = {m.field: m.bmf for m in CATALOGUE if m.bmf and m.per_operation}


def operation_benchmarks(name: str, members: Sequence[RunResult]) -> dict[str, dict[str, dict[str, float]]]:
    """One benchmark per operation type of timing runs that report them: ``<benchmark>/op/<TYPE>``."""
    if members[0].kind == "cost":
        return {}  # a slowed-down server's rates and latencies mean nothing
    types = sorted({op.type for r in members for op in r.operations})
    doc: dict[str, dict[str, dict[str, float]]] = {}
    for op_type in types:
        measures: dict[str, dict[str, float]] = {}
        for field, measure in OPERATION_MEASURES.items():
            values = [v for r in members if (v := r.metric(f"{op_type}.{field}")) is not None and math.isfinite(v)]
            if values:
                measures[measure] = {
                    "value": _round(statistics.median(values)),
                    "lower_value": _round(min(values)),
                    "upper_value": _round(max(values)),
                }
        if measures:
            doc[f"{name}/op/{op_type}"] = measures
    return doc


# --- end per-operation benchmarks ----------------------------------------------------------------------


def validate_bmf(doc: object) -> None:
    """Raise :class:`HarnessError` unless ``doc`` is valid BMF with finite numbers only."""
    try:
        jsonschema.validate(doc, BMF_SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(document)"
        raise ReportError(f"not valid Bencher Metric Format at {where}: {exc.message}") from exc
    try:
        json.dumps(doc, allow_nan=False)
    except ValueError as exc:
        raise ReportError(f"not valid Bencher Metric Format: {exc} (NaN or infinity)") from exc


def write_bmf(path: Path, runs: Sequence[RunResult]) -> dict[str, dict[str, dict[str, float]]]:
    """Validate and write the BMF document of ``runs`` to ``path`` (``-`` is not special); returns it."""
    doc = to_bmf(runs)
    validate_bmf(doc)
    write_atomic(Path(path), json.dumps(doc, indent=2, sort_keys=False, allow_nan=False) + "\n")
    return doc
