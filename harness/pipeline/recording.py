"""What ``dbperf baseline record`` replaces, said before it does.

A baseline file that is already there (often committed: ``baselines/cost/`` travels with the repository)
is named before anything runs and again when it is replaced, with what it was recorded for. One recorded
for the same server build and the same configuration, from at least as many runs, is kept unless
``--force``: measuring the same thing again only moves its numbers by noise, a ``git diff`` with nothing
behind it. Keeping it is a note, not an error: the command still recorded what it was asked for (the
other kind, the other thread counts; the runs are stored). A different build, configuration, scenario
definition or counting tool replaces it (that is what recording is for), and so does a recording of more
runs than it holds (a baseline of more runs lets the gate decide with fewer); the line says what changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import BaselineError
from harness.judge.baseline_writer import write_baseline
from harness.judge.baselines import Baseline, baseline_path, load_baseline
from harness.model import Kind, RunResult, Testbed
from harness.pipeline.cases import Case

KIND_WORDS: dict[Kind, str] = {"time": "timing", "cost": "cost"}


@dataclass(frozen=True)
class Existing:
    """A baseline file the runs would replace; ``old`` is None when it cannot be read."""

    path: Path
    old: Baseline | None
    problem: str = ""  # why it cannot be read


def existing_at(path: Path) -> Existing | None:
    """The baseline at ``path``, if a file is there (an unreadable one is replaced, and said)."""
    if not path.is_file():
        return None
    try:
        return Existing(path, load_baseline(path))
    except BaselineError as exc:
        return Existing(path, None, str(exc))


def before_notes(root: Path, testbed: Testbed, case: Case, threads: Mapping[Kind, Sequence[int]]) -> list[str]:
    """Said before measuring, for every file the recording would write that is already there, so a
    recording nobody wanted can be stopped before it costs minutes."""
    notes = []
    for kind, counts in threads.items():
        for n in counts:
            path = baseline_path(root, testbed, case.server.name, case.scenario.name, case.scenario.profile, n, kind)
            found = existing_at(path)
            if found is None:
                continue
            if found.old is None:
                notes.append(f"{path} exists but cannot be read; it will be replaced ({found.problem})")
            else:
                notes.append(
                    f"{path} exists ({describe(found.old)}): it is replaced only if these runs have another "
                    "build or configuration, or more runs, or with --force"
                )
    return notes


@dataclass(frozen=True)
class Written:
    """What :func:`write_all` did: files written, files kept (same build and configuration), notes."""

    paths: tuple[Path, ...]
    kept: tuple[Existing, ...]
    notes: tuple[str, ...]


def write_all(root: Path, groups: Sequence[Sequence[RunResult]], *, force: bool) -> Written:
    """Write one baseline per group of runs (one kind x thread count), keeping the same recording unless forced."""
    paths: list[Path] = []
    kept: list[Existing] = []
    notes: list[str] = []
    for runs in groups:
        found = for_runs(root, runs) if all(r.ok for r in runs) else None
        if found is not None and found.old is not None and not force and same_recording(found.old, runs):
            kept.append(found)
            continue
        paths.append(write_baseline(root, runs))
        if found is not None:
            notes.append(replaced_note(found, runs, forced=force))
    return Written(tuple(paths), tuple(kept), tuple(notes))


def for_runs(root: Path, runs: Sequence[RunResult]) -> Existing | None:
    """The baseline the runs of one kind x thread count would replace."""
    run = runs[0]
    return existing_at(baseline_path(root, run.testbed, run.server, run.scenario, run.profile, run.threads, run.kind))


def same_recording(old: Baseline, runs: Sequence[RunResult]) -> bool:
    """Whether the old baseline measured what these runs measure: same build, configuration and definition,
    from at least as many runs (a recording of more runs is what a gate that needs them asked for).

    Cost: the same build id (or version when a build id is missing), requested configuration, scenario
    definition, counting tool and architecture. Timing: the same build, effective configuration and
    scenario definition (the testbed is the file's folder).
    """
    run = runs[0]
    if old.kind != run.kind or old.scenario_hash != run.scenario_hash or len(old.run_ids) < len(runs):
        return False
    if old.build_id and run.build_id:
        same_build = old.build_id == run.build_id
    else:
        same_build = old.server_version == run.server_version
    if not same_build:
        return False
    if run.kind == "cost":
        return (old.requested_hash, old.tool, old.arch) == (run.requested_hash, run.tool, run.arch)
    return old.config_hash == run.config_hash


def describe(old: Baseline) -> str:
    """``recorded 2026-11-23 from 3 runs on build 439da8d94412 (10.11.19-...), configuration d697f3c22237``."""
    build = f"build {old.build_id[:12]} ({old.server_version})" if old.build_id else f"server {old.server_version}"
    config = old.requested_hash if old.kind == "cost" and old.requested_hash else old.config_hash
    git = f", git {old.git_sha[:10]}" if old.git_sha else ""
    return f"recorded {old.recorded_at[:10]} from {len(old.run_ids)} runs on {build}, configuration {config}{git}"


def changed(old: Baseline, runs: Sequence[RunResult]) -> str:
    """What differs between the old baseline and these runs, in words."""
    run = runs[0]
    parts = []
    if old.build_id != run.build_id or old.server_version != run.server_version:
        parts.append(f"build {old.build_id[:12] or old.server_version} -> {run.build_id[:12] or run.server_version}")
    old_config = old.requested_hash if old.kind == "cost" else old.config_hash
    new_config = run.requested_hash if run.kind == "cost" else run.config_hash
    if old_config != new_config:
        parts.append(f"configuration {old_config} -> {new_config}")
    if old.scenario_hash != run.scenario_hash:
        parts.append(f"scenario definition {old.scenario_hash} -> {run.scenario_hash}")
    if run.kind == "cost" and (old.tool, old.arch) != (run.tool, run.arch):
        parts.append(f"counted by {old.tool} on {old.arch} -> {run.tool} on {run.arch}")
    if len(old.run_ids) < len(runs):
        parts.append(f"{len(old.run_ids)} -> {len(runs)} runs")
    return ", ".join(parts) or "the same build and configuration"


def replaced_note(found: Existing, runs: Sequence[RunResult], *, forced: bool) -> str:
    """Said when a file was replaced: what it held, and that it is worth a look before committing."""
    kind = KIND_WORDS[runs[0].kind]
    if found.old is None:
        return f"replaced the unreadable {kind} baseline {found.path}"
    why = "--force" if forced and same_recording(found.old, runs) else changed(found.old, runs)
    return (
        f"replaced the {kind} baseline {found.path} ({describe(found.old)}; {why}): "
        "review it with git diff before committing"
    )


def kept_note(kept: Sequence[Existing], group_id: str) -> str:
    """Said when files were kept (exit 0: the command recorded what was asked): which, why, how to replace them."""
    first = kept[0]
    more = f" and {len(kept) - 1} more" if len(kept) > 1 else ""
    recorded = f" ({describe(first.old)})" if first.old is not None else ""
    kind = KIND_WORDS[first.old.kind] if first.old is not None else "baseline"
    return (
        f"kept the {kind} baseline {first.path}{more}: recorded for the same build and configuration as these "
        f"runs{recorded}, so recording again would only change its numbers by noise; the runs are stored "
        f"(group {group_id}); pass --force to replace it"
    )
