"""Recording a baseline: the runs of one server x scenario x threads x kind written as one baseline file.

The file's layout and format are :mod:`harness.judge.baselines`'; a timing baseline keeps each judged
metric's samples (and each operation type's, when every run reports it), a cost baseline its
instructions, the functions behind them, the configuration and the gating work vector.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import BaselineError
from harness.judge.baselines import FORMAT, FORMAT_VERSION, baseline_path, config_variables
from harness.judge.explain import per_transaction, trimmed
from harness.model import METRICS, RunResult
from harness.model.metrics import WORK_METRICS

#: The per-operation fields a timing baseline records for each operation type (always above 0 when measured).
_OPERATION_SAMPLES = ("ops_per_s", "ops_per_min", "avg_ms", "p50_ms", "p95_ms", "p99_ms")


def operation_metric_names(runs: Sequence[RunResult]) -> tuple[str, ...]:
    """``ops_per_s`` and ``<TYPE>.<field>`` for the operation types every run reports (none: ``()``)."""
    if not runs or not all(r.operations for r in runs):
        return ()
    types = sorted(set.intersection(*({op.type for op in r.operations} for r in runs)))
    return ("ops_per_s", *(f"{t}.{f}" for t in types for f in _OPERATION_SAMPLES))


def write_baseline(root: Path, runs: Sequence[RunResult]) -> Path:
    """Write the baseline for runs of one server x scenario x threads x kind (all must be ok)."""
    if not runs:
        raise BaselineError("no runs to record a baseline from")
    failed = [r for r in runs if not r.ok]
    if failed:
        raise BaselineError(
            f"refusing to record a baseline: run {failed[0].run_id} failed ({failed[0].failure}); "
            "fix the failure and record again"
        )
    first = runs[0]
    if len({_identity(r) for r in runs}) != 1:
        raise BaselineError(
            "runs of different kinds, servers, scenarios, thread counts, builds or configs cannot share a baseline"
        )
    metrics = ("instr_per_txn",) if first.kind == "cost" else (*METRICS, *operation_metric_names(runs))
    samples: dict[str, list[float] | None] = {}
    for metric in metrics:
        values = [r.metric(metric) for r in runs]
        samples[metric] = None if any(v is None for v in values) else [float(v) for v in values if v is not None]
    document: dict[str, object] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "kind": first.kind,
        "testbed": {**dataclasses.asdict(first.testbed), "fingerprint": first.testbed.fingerprint},
        "server": {
            "name": first.server,
            "server_version": first.server_version,
            "config_hash": first.config_hash,
            "build_id": first.build_id,
            "requested_hash": first.requested_hash,
        },
        "scenario": {"name": first.scenario, "hash": first.scenario_hash, "profile": first.profile},
        "threads": first.threads,
        "provenance": {
            "git_sha": first.git_sha,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "profile": first.profile,
            "repetitions": len(runs),
            "run_ids": [r.run_id for r in runs],
        },
        "samples": samples,
    }
    if first.kind == "cost":
        document["cost"] = {"backend": first.backend, "tool": first.tool, "arch": first.arch}
        document["functions"] = trimmed(per_transaction(runs))
        document["variables"] = config_variables(first.variables)
        document["work"] = work_samples(runs)
    path = baseline_path(root, first.testbed, first.server, first.scenario, first.profile, first.threads, first.kind)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(document, indent=2) + "\n")
        tmp.replace(path)
    except OSError as exc:
        raise BaselineError(
            f"cannot write the baseline {path}: {exc.strerror}; check the folder and free space"
        ) from exc
    return path


def work_samples(runs: Sequence[RunResult]) -> dict[str, list[float]]:
    """The gating work-vector components every run measured, per run (a component a server lacks is left out)."""
    out: dict[str, list[float]] = {}
    for w in WORK_METRICS:
        values = [r.metrics.work.get(w.name) for r in runs]
        if w.gating and all(v is not None for v in values):
            out[w.name] = [float(v) for v in values if v is not None]
    return out


def _identity(run: RunResult) -> tuple[str | int, ...]:
    """What runs sharing one baseline must have in common (cost runs: not the machine)."""
    where = run.requested_hash if run.kind == "cost" else f"{run.config_hash}@{run.testbed.fingerprint}"
    return (run.kind, run.server, run.scenario, run.threads, run.scenario_hash, run.build_id, where)
