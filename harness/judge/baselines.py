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
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness import bounded_json
from harness.errors import BaselineError
from harness.model import METRICS, Kind, RunKind, Testbed
from harness.model.ids import volatile
from harness.model.operation_stats import is_operation_metric
from harness.model.validation import first_problem
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


def baseline_path(
    root: Path, testbed: Testbed, server: str, scenario: str, profile: str, threads: int, kind: RunKind = "time"
) -> Path:
    """Where the baseline of a server x scenario x profile x threads lives (cost baselines are not per testbed)."""
    if kind == "cost":
        return cost_baseline_path(root, server, scenario, profile, threads)
    return root / testbed.fingerprint / server / scenario / profile / f"{threads}t.json"


def cost_baseline_path(root: Path, server: str, scenario: str, profile: str, threads: int) -> Path:
    """Where the cost baseline of a server x scenario x profile x threads lives (any machine's)."""
    return root / COST_FOLDER / server / scenario / profile / f"{threads}t.json"


def record_command(
    scenarios: str | Sequence[str],
    server: str,
    profile: str,
    *,
    kind: Kind | Literal["both"] = "both",
    repetitions: int | None = None,
    flags: Sequence[str] = (),
) -> str:
    """The one way dbperf words the command that records a baseline: ``dbperf baseline record --scenario S
    --server T --profile P``, with ``--cost`` (cost runs at their scenario's ``[cost] repetitions``) or
    ``--no-cost`` for one kind, ``--repetitions N`` for the timing runs, then ``flags`` (the invocation's
    own settings a user must carry over)."""
    names = [scenarios] if isinstance(scenarios, str) else list(dict.fromkeys(scenarios))
    argv = ["dbperf", "baseline", "record", "--scenario", ",".join(names), "--server", server, "--profile", profile]
    if kind == "cost":
        argv.append("--cost")
    elif kind == "time":
        argv.append("--no-cost")
    if kind != "cost" and repetitions is not None:
        argv += ["--repetitions", str(repetitions)]
    return shlex.join([*argv, *flags])


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
        raise BaselineError(f"{path}: {first_problem(exc)}; fix it or record the baseline again") from None
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


def config_variables(variables: Mapping[str, str]) -> dict[str, str]:
    """The server variables that describe a configuration (per-instance values such as ports and paths left out)."""
    return {k: v for k, v in sorted(variables.items()) if not volatile(k, v, variables)}


def all_baselines(root: Path) -> list[Baseline]:
    """Every baseline file under ``root`` (malformed ones raise, naming the file)."""
    if not root.is_dir():
        return []
    return [load_baseline(p) for p in sorted(root.glob("*/*/*/*/*t.json"))]
