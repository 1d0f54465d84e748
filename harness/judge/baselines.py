"""Recorded baselines: one versioned, human-reviewable JSON file per testbed x server x scenario x threads.

Layout: ``baselines/<testbed fingerprint>/<server>/<scenario>/<threads>t.json``. A file holds the
testbed, the server (name, server version, effective-config hash), the scenario definition's hash,
provenance (git sha, date, profile, repetitions, run ids) and the raw per-repetition values of every
metric. A baseline is only ever compared with runs of the same testbed fingerprint, config hash and
scenario hash; anything else is reported as "no comparable baseline" with the reason and the command
to record one.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import BaselineError
from harness.model import METRICS, RunResult, Testbed

FORMAT = "dbperf-baseline"
FORMAT_VERSION = 2
#: Older formats read by upgrading them in memory: version 1 named the server "target".
READABLE_VERSIONS = (1, 2)


class _ServerInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    server_version: str
    config_hash: str


class _ScenarioInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    hash: str
    profile: str


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
    testbed: dict[str, str | int | float | None]
    server: _ServerInfo
    scenario: _ScenarioInfo
    threads: int = Field(ge=1)
    provenance: _Provenance
    samples: dict[str, list[float] | None]


@dataclass(frozen=True)
class Baseline:
    """The samples a candidate is judged against."""

    path: Path
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

    def values(self, metric: str) -> tuple[float, ...]:
        return self.samples.get(metric, ())


def baseline_path(root: Path, testbed: Testbed, server: str, scenario: str, threads: int) -> Path:
    return root / testbed.fingerprint / server / scenario / f"{threads}t.json"


def record_command(scenario: str, server: str, profile: str) -> str:
    return f"dbperf baseline record --scenario {scenario} --server {server} --profile {profile}"


def write_baseline(root: Path, runs: Sequence[RunResult]) -> Path:
    """Write the baseline for runs of one server x scenario x threads (all must be ok)."""
    if not runs:
        raise BaselineError("no runs to record a baseline from")
    failed = [r for r in runs if not r.ok]
    if failed:
        raise BaselineError(
            f"refusing to record a baseline: run {failed[0].run_id} failed ({failed[0].failure}); "
            "fix the failure and record again"
        )
    first = runs[0]
    keys = {(r.server, r.scenario, r.threads, r.config_hash, r.scenario_hash, r.testbed.fingerprint) for r in runs}
    if len(keys) != 1:
        raise BaselineError("runs of different servers, scenarios, thread counts or configs cannot share a baseline")
    samples: dict[str, list[float] | None] = {}
    for metric in METRICS:
        values = [r.metrics.get(metric) for r in runs]
        samples[metric] = None if any(v is None for v in values) else [float(v) for v in values if v is not None]
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "testbed": {**dataclasses.asdict(first.testbed), "fingerprint": first.testbed.fingerprint},
        "server": {
            "name": first.server,
            "server_version": first.server_version,
            "config_hash": first.config_hash,
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
    path = baseline_path(root, first.testbed, first.server, first.scenario, first.threads)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(document, indent=2) + "\n")
    tmp.replace(path)
    return path


def load_baseline(path: Path) -> Baseline:
    """Read and validate one baseline file; errors name the file and the fix."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{path}: not valid JSON (line {exc.lineno}: {exc.msg}); fix it or delete it and record again"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BaselineError(f'{path}: not a dbperf baseline file (no "format": "{FORMAT}"); delete it')
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
    unknown = sorted(set(spec.samples) - set(METRICS))
    if unknown:
        raise BaselineError(f"{path}: unknown metric(s) {unknown} in samples; allowed: {', '.join(METRICS)}")
    return Baseline(
        path=path,
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
        samples={k: tuple(v) for k, v in spec.samples.items() if v},
    )


def find_baseline(root: Path, testbed: Testbed, server: str, scenario: str, threads: int) -> Baseline | None:
    path = baseline_path(root, testbed, server, scenario, threads)
    return load_baseline(path) if path.is_file() else None


def incomparable_reason(baseline: Baseline, runs: Sequence[RunResult]) -> str | None:
    """Why the runs cannot be judged against this baseline (None when they can)."""
    run = runs[0]
    if baseline.testbed_fingerprint != run.testbed.fingerprint:
        return f"the baseline was recorded on testbed {baseline.testbed_fingerprint}, this is {run.testbed.fingerprint}"
    if baseline.config_hash != run.config_hash:
        return (
            f"the server configuration changed (config hash {baseline.config_hash} -> {run.config_hash}, "
            f"version {baseline.server_version} -> {run.server_version})"
        )
    if baseline.scenario_hash != run.scenario_hash:
        return f"the scenario definition changed (hash {baseline.scenario_hash} -> {run.scenario_hash})"
    return None


def all_baselines(root: Path) -> list[Baseline]:
    """Every baseline file under ``root`` (malformed ones raise, naming the file)."""
    if not root.is_dir():
        return []
    return [load_baseline(p) for p in sorted(root.glob("*/*/*/*t.json"))]
