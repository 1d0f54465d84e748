"""Recorded baselines: one versioned, human-reviewable JSON file per server x scenario x threads.

Two kinds, laid out by what determines their numbers::

    baselines/<testbed fingerprint>/<server>/<scenario>/<profile>/<threads>t.json   timing: this machine only
    baselines/cost/<server>/<scenario>/<profile>/<threads>t.json                    cost: travels between machines

A timing baseline holds the raw per-repetition QPS, p95, p99 and CPU/txn of one testbed, and is only
compared with runs of the same testbed fingerprint, config hash and scenario hash.

A cost baseline holds instructions per transaction counted under callgrind. That count depends on the
server build, the scenario (dataset and event counts), the configuration, valgrind's version and the
architecture, not on the machine's kernel or host name: it can be committed and used on any x86 box.
A different scenario definition, valgrind or architecture is a different measuring stick and is never
compared. A different server build (a Debian point release) or configuration is exactly what the
cost gate exists to catch: it is compared, and the verdict says what differs (the build, and the
server variables that changed).

A cost baseline also holds the work vector (format 3): per run, per transaction, every component of
:mod:`harness.model.work` that gates (fsyncs, pwrites, preads, buffer-pool reads, redo bytes, handler
and row counts...), judged like A/B judges them. A format-2 cost baseline has none: it judges
instructions only, and the verdict says the work vector was not judged.

Anything not comparable is reported as "no comparable baseline" with the reason and the command that
records one. Format 1 named the server "target" and is read as format 2.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness import bounded_json
from harness.errors import BaselineError
from harness.judge.explain import per_transaction, trimmed
from harness.model import METRICS, RunKind, RunResult, Testbed
from harness.model.ids import volatile
from harness.model.metrics import WORK_METRICS
from harness.model.operation_stats import is_operation_metric
from harness.model.work import WORK

FORMAT = "dbperf-baseline"
FORMAT_VERSION = 3
#: Older formats read by upgrading them in memory: version 1 named the server "target"; version 2 cost
#: baselines hold no work vector.
READABLE_VERSIONS = (1, 2, 3)
COST_FOLDER = "cost"
#: Samples a baseline file may hold besides the judged metrics (written by older versions, ignored).
_LEGACY_SAMPLES = {"tps"}


class _ServerInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    server_version: str
    config_hash: str
    build_id: str = ""
    requested_hash: str = ""


class _ScenarioInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    hash: str
    profile: str


class _CostInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    backend: str
    tool: str
    arch: str


class _Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid")
    git_sha: str
    recorded_at: str
    profile: str
    repetitions: int
    run_ids: list[str]


class _BaselineFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: str
    format_version: int
    kind: RunKind = "time"
    testbed: dict[str, str | int | float | None]
    server: _ServerInfo
    scenario: _ScenarioInfo
    threads: int = Field(ge=1)
    cost: _CostInfo | None = None
    provenance: _Provenance
    samples: dict[str, list[float] | None]
    functions: dict[str, float] = Field(default_factory=dict)  # cost: self instructions per transaction
    variables: dict[str, str] = Field(default_factory=dict)  # cost: the server variables the runs had
    # cost, format 3: the gating work-vector components per run, per transaction (counts: 0 is a value)
    work: dict[str, list[float]] | None = None


@dataclass(frozen=True)
class Baseline:
    """The samples a candidate is judged against, and what they are comparable with."""

    path: Path
    kind: RunKind
    testbed_fingerprint: str
    server: str
    server_version: str
    config_hash: str
    scenario: str
    scenario_hash: str
    profile: str
    threads: int
    git_sha: str
    recorded_at: str
    run_ids: tuple[str, ...]
    samples: dict[str, tuple[float, ...]]
    build_id: str = ""
    requested_hash: str = ""
    backend: str = ""
    tool: str = ""
    arch: str = ""
    functions: dict[str, float] = dataclasses.field(default_factory=dict)
    variables: dict[str, str] = dataclasses.field(default_factory=dict)
    #: The work vector per run (cost, format 3); None when the file predates it (nothing of it is judged).
    work: dict[str, tuple[float, ...]] | None = None

    def values(self, metric: str) -> tuple[float, ...]:
        if metric in WORK:
            return (self.work or {}).get(metric, ())
        return self.samples.get(metric, ())

    def warnings_for(self, runs: Sequence[RunResult]) -> list[str]:
        """What a reader must know when judging ``runs`` by this cost baseline: the configuration it gates."""
        run = runs[0]
        if self.kind != "cost":
            return []
        command = record_command(self.scenario, self.server, self.profile, cost=True)
        unjudged = []
        if self.work is None:
            unjudged.append(
                "the baseline holds no work vector (recorded by an older dbperf): system calls and server work "
                f"not judged, instructions only; record it again to judge them: {command}"
            )
        if not self.requested_hash or self.requested_hash == run.requested_hash:
            return unjudged
        changed = _variable_changes(self.variables, config_variables(run.variables))
        return [
            *unjudged,
            "the configuration differs from the baseline's"
            + (f" ({changed})" if changed else "")
            + ": a change here comes from it",
            f"record the baseline again if this is the new normal: {command}",
        ]


def baseline_path(
    root: Path, testbed: Testbed, server: str, scenario: str, profile: str, threads: int, kind: RunKind = "time"
) -> Path:
    """Where the baseline of a server x scenario x profile x threads lives (cost baselines are not per testbed)."""
    folder = COST_FOLDER if kind == "cost" else testbed.fingerprint
    return root / folder / server / scenario / profile / f"{threads}t.json"


def record_command(scenario: str, server: str, profile: str, *, cost: bool = False) -> str:
    return f"dbperf baseline record --scenario {scenario} --server {server} --profile {profile}" + (
        " --cost" if cost else ""
    )


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


def _read(path: Path) -> dict[str, object]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read ({exc.strerror})") from exc
    except UnicodeDecodeError:
        raise BaselineError(
            f"{path}: not a text file (binary content); delete it and record the baseline again"
        ) from None
    try:
        data = bounded_json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); fix it or delete it and record again"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BaselineError(f'{path}: not a dbperf baseline file (no "format": "{FORMAT}"); delete it')
    return data


def load_baseline(path: Path) -> Baseline:
    """Read and validate one baseline file; errors name the file and the fix."""
    data = _read(path)
    version = data.get("format_version")
    if version == 1 and isinstance(data.get("target"), dict):
        data = {**{k: v for k, v in data.items() if k != "target"}, "server": data["target"], "format_version": 2}
        version = 2
    if not isinstance(version, int) or version < min(READABLE_VERSIONS):
        raise BaselineError(
            f"{path}: baseline format {version} is older than this dbperf reads ({FORMAT_VERSION}); "
            "re-record it with 'dbperf baseline record' (the old samples cannot be trusted to mean the same)"
        )
    if version > FORMAT_VERSION:
        raise BaselineError(f"{path}: baseline format {version} is newer than this dbperf; upgrade dbperf")
    try:
        spec = _BaselineFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise BaselineError(f"{path}: field '{where}': {err['msg']}; fix it or record the baseline again") from None
    unknown = sorted(m for m in set(spec.samples) - set(METRICS) - _LEGACY_SAMPLES if not is_operation_metric(m))
    if unknown:
        raise BaselineError(f"{path}: unknown metric(s) {unknown} in samples; allowed: {', '.join(METRICS)}")
    _check_samples(path, spec.kind, spec.samples)
    _check_work(path, spec.work)
    cost = spec.cost
    return Baseline(
        path=path,
        kind=spec.kind,
        testbed_fingerprint=str(spec.testbed.get("fingerprint", "")),
        server=spec.server.name,
        server_version=spec.server.server_version,
        config_hash=spec.server.config_hash,
        scenario=spec.scenario.name,
        scenario_hash=spec.scenario.hash,
        profile=spec.scenario.profile,
        threads=spec.threads,
        git_sha=spec.provenance.git_sha,
        recorded_at=spec.provenance.recorded_at,
        run_ids=tuple(spec.provenance.run_ids),
        samples={k: tuple(v) for k, v in spec.samples.items() if v and (k in METRICS or is_operation_metric(k))},
        build_id=spec.server.build_id,
        requested_hash=spec.server.requested_hash,
        backend=cost.backend if cost else "",
        tool=cost.tool if cost else "",
        arch=cost.arch if cost else "",
        functions=dict(spec.functions),
        variables=dict(spec.variables),
        work={k: tuple(v) for k, v in spec.work.items()} if spec.work is not None else None,
    )


#: The metric every run of a kind measures: a baseline of that kind without its samples judges nothing.
_PRIMARY: dict[RunKind, str] = {"time": "qps", "cost": "instr_per_txn"}


def _check_samples(path: Path, kind: RunKind, samples: Mapping[str, list[float] | None]) -> None:
    """Samples a judge can use: the kind's primary metric present, no empty list, every value finite and > 0.

    ``null`` stays legal (the metric was not measured where the baseline was recorded, said as "not measured
    here"); an empty list or a missing primary metric cannot come from ``baseline record`` and would judge
    over nothing, and NaN, infinities, zero or negative values have no meaning for any judged metric (QPS,
    latencies, CPU time and instructions per transaction are all positive).
    """
    again = "fix it or record the baseline again"
    primary = _PRIMARY[kind]
    if samples.get(primary) is None:
        raise BaselineError(f"{path}: field 'samples.{primary}' is missing: every {kind} baseline has it; {again}")
    for metric, values in samples.items():
        if values is None or (metric not in METRICS and not is_operation_metric(metric)):
            continue
        if not values:
            raise BaselineError(f"{path}: field 'samples.{metric}' is an empty list (no samples to judge by); {again}")
        for i, value in enumerate(values):
            if not math.isfinite(value) or value <= 0:
                raise BaselineError(
                    f"{path}: field 'samples.{metric}[{i}]' is {value!r}; a sample must be a finite number above 0; "
                    f"{again}"
                )


def _check_work(path: Path, work: Mapping[str, list[float]] | None) -> None:
    """Work-vector samples a judge can use: known components, no empty list, every count finite and >= 0."""
    again = "fix it or record the baseline again"
    for name, values in (work or {}).items():
        if name not in WORK:
            raise BaselineError(f"{path}: unknown work-vector component 'work.{name}'; {again}")
        if not values:
            raise BaselineError(f"{path}: field 'work.{name}' is an empty list (no samples to judge by); {again}")
        for i, value in enumerate(values):
            if not math.isfinite(value) or value < 0:
                raise BaselineError(
                    f"{path}: field 'work.{name}[{i}]' is {value!r}; a count per transaction is finite and >= 0; "
                    f"{again}"
                )


def find_baseline(
    root: Path, testbed: Testbed, server: str, scenario: str, profile: str, threads: int, kind: RunKind = "time"
) -> Baseline | None:
    path = baseline_path(root, testbed, server, scenario, profile, threads, kind)
    return load_baseline(path) if path.is_file() else None


def incomparable_reason(baseline: Baseline, runs: Sequence[RunResult]) -> str | None:
    """Why the runs cannot be judged against this baseline (None when they can).

    A baseline judges one server build (version and build id) running one scenario definition. A
    timing baseline also pins the machine and the configuration; a cost baseline pins the counting
    tool and the architecture and judges a new configuration of the same build (that change is what
    a cost gate is for, and the verdict names the variables that differ). A new build is measured
    against the old one side by side (``dbperf compare --cost``), never against a file that says it
    was recorded on another build.
    """
    run = runs[0]
    if baseline.scenario_hash != run.scenario_hash:
        return f"the scenario definition changed (hash {baseline.scenario_hash} -> {run.scenario_hash})"
    other_build = bool(baseline.build_id and run.build_id and baseline.build_id != run.build_id)
    if baseline.server_version != run.server_version or other_build:
        return (  # the verdict goes on with the recording to run ("record one with: ...", judge/gate.py)
            f"the baseline was recorded on server {baseline.server_version} (build {baseline.build_id[:12] or '?'}), "
            f"this is {run.server_version} (build {run.build_id[:12] or '?'}); compare the two builds side by side "
            "with 'dbperf compare', or record the baseline again"
        )
    if baseline.kind == "cost":
        if (baseline.backend, baseline.tool, baseline.arch) != (run.backend, run.tool, run.arch):
            return (
                f"instructions were counted by {baseline.backend} {baseline.tool} on {baseline.arch}, these by "
                f"{run.backend} {run.tool} on {run.arch}: counts from different tools or architectures differ"
            )
        return None  # a new configuration of the same build is judged, and said (Baseline.warnings_for)
    if baseline.testbed_fingerprint != run.testbed.fingerprint:
        return f"the baseline was recorded on testbed {baseline.testbed_fingerprint}, this is {run.testbed.fingerprint}"
    if baseline.config_hash != run.config_hash:
        return (
            f"the server configuration changed (config hash {baseline.config_hash} -> {run.config_hash}, "
            f"version {baseline.server_version} -> {run.server_version})"
        )
    return None


def config_variables(variables: Mapping[str, str]) -> dict[str, str]:
    """The server variables that describe a configuration (per-instance values such as ports and paths left out)."""
    return {k: v for k, v in sorted(variables.items()) if not volatile(k, v, variables)}


def _variable_changes(old: Mapping[str, str], new: Mapping[str, str], limit: int = 6) -> str:
    names = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    shown = [f"{k} {old.get(k, '-')} → {new.get(k, '-')}" for k in names[:limit]]
    return ", ".join(shown) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def all_baselines(root: Path) -> list[Baseline]:
    """Every baseline file under ``root`` (malformed ones raise, naming the file)."""
    if not root.is_dir():
        return []
    return [load_baseline(p) for p in sorted(root.glob("*/*/*/*/*t.json"))]
