"""Whether runs can be judged by a baseline, and what a reader must know when they are."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.judge.baselines import Baseline, config_variables, record_command
from harness.model import RunResult


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
        return None  # a new configuration of the same build is judged, and said (cost_warnings)
    if baseline.testbed_fingerprint != run.testbed.fingerprint:
        return f"the baseline was recorded on testbed {baseline.testbed_fingerprint}, this is {run.testbed.fingerprint}"
    if baseline.config_hash != run.config_hash:
        return (
            f"the server configuration changed (config hash {baseline.config_hash} -> {run.config_hash}, "
            f"version {baseline.server_version} -> {run.server_version})"
        )
    return None


def cost_warnings(baseline: Baseline, runs: Sequence[RunResult]) -> list[str]:
    """What a reader must know when judging ``runs`` by this cost baseline: the configuration it gates."""
    run = runs[0]
    if baseline.kind != "cost":
        return []
    command = record_command(baseline.scenario, baseline.server, baseline.profile, kind="cost")
    unjudged = []
    if baseline.work is None:
        unjudged.append(
            "the baseline holds no work vector (recorded by an older dbperf): system calls and server work "
            f"not judged, instructions only; record it again to judge them: {command}"
        )
    if not baseline.requested_hash or baseline.requested_hash == run.requested_hash:
        return unjudged
    changed = _variable_changes(baseline.variables, config_variables(run.variables))
    return [
        *unjudged,
        "the configuration differs from the baseline's"
        + (f" ({changed})" if changed else "")
        + ": a change here comes from it",
        f"record the baseline again if this is the new normal: {command}",
    ]


def _variable_changes(old: Mapping[str, str], new: Mapping[str, str], limit: int = 6) -> str:
    names = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    shown = [f"{k} {old.get(k, '-')} → {new.get(k, '-')}" for k in names[:limit]]
    return ", ".join(shown) + (f" and {len(names) - limit} more" if len(names) > limit else "")
