"""Plan a pull request's performance check from the git diff between two refs (``dbperf ci plan``).

The plan answers one question: *which A/B comparisons does this change need?* It reads
``git diff --name-status base...head`` (renames and copies detected), loads the definitions that
changed on both sides, and compares their *effective* content, so an edited comment, a new
description or a pure rename costs no runner time. The rules, each one change isolated:

``target``
    A server target whose effective definition differs between base and head -- its TOML (version
    pin, image, binary, variables, CPU placement, memory) or the ``config_file`` it references on
    either side -- is compared as ``T@base`` (definitions from the base tree) against ``T`` (head)
    on the default scenario set. A renamed target compares the old name at base with the new one.
``copied-target``
    A new target that git finds was copied from an existing one (``--find-copies-harder``) is
    compared against that source as it is at base: "I copied mariadb-local and switched the thread
    pool on" asks exactly "is the thread pool faster than mariadb-local?".
``scenario``
    A scenario whose workload differs for the chosen profile (its TOML, or the Lua script it
    references) runs as ``S@base`` against ``S`` on the default target, head definition on both
    sides. Changes that only alter judging (repetitions, ``min_effect``, ``gate``) or another
    profile are reported as notes: the workload is the same, an A/B would compare it with itself.
``harness-aa``
    A change to the harness itself (``harness/**``, ``pyproject.toml``) cannot be A/B-tested by
    the harness it changes (that needs two installations; out of scope). It gets an *A/A* check
    instead: the default target against itself on the default scenarios, both from head. This
    proves the new code still runs end to end, and guards the statistics against false alarms --
    a REGRESSION verdict between identical configurations is a harness bug or a noisy runner.

A new target or scenario with nothing to compare against is *recorded only* (a
:class:`Recording`: run once, stored, no verdict); deleted ones and changes to ``baselines/`` are
notes. Whatever is loaded from the base tree gets a distinct name (``@base``) so its runs never mix
with the head's in the store.

Executing a plan (``dbperf ci run``): :func:`materialise` the base tree, take the working tree as
the head tree, and turn each :class:`Side` into a ``(ServerTarget, Scenario)`` with
:func:`load_side`.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import io
import json
import posixpath
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.config.scenarios import PROFILES, load_scenario_file
from harness.config.servers import load_target_file
from harness.errors import ConfigError, GitError, HarnessError
from harness.model import Scenario, ServerTarget

Tree = Literal["base", "head"]
Kind = Literal["target", "copied-target", "scenario", "harness-aa"]
Area = Literal["target", "server-file", "scenario", "scenario-file", "harness", "baseline", "other"]

PLAN_FORMAT = "dbperf.ciplan/1"
SERVERS = "servers"
SCENARIOS = "scenarios"
DEFAULT_TARGET = "mariadb-local"
#: The small default set: the pure read path (CPU cost per query) and a read/write mix (flushing,
#: locking). Together about 5 minutes per comparison pair on the ``ci`` profile.
DEFAULT_CI_SCENARIOS = ("oltp_point_select", "oltp_read_write")
BASE_SUFFIX = "@base"
AA_SUFFIX = "@aa"
#: Rough cost of one server start, restore and teardown, for the time estimate only.
START_OVERHEAD_S = 5


@dataclass(frozen=True)
class FileChange:
    """One line of ``git diff --name-status``: status letter, path (and the source of a rename/copy)."""

    status: str
    path: str
    old_path: str | None = None
    similarity: int | None = None
    area: Area = "other"


@dataclass(frozen=True)
class Side:
    """One side of a comparison: which target and scenario, loaded from which tree, stored as what."""

    target: str
    target_tree: Tree
    target_label: str
    scenario: str
    scenario_tree: Tree
    scenario_label: str

    @property
    def files(self) -> dict[str, str]:
        """The definition files this side is loaded from, as ``tree:path``."""
        return {
            "target": f"{self.target_tree}:{SERVERS}/{self.target}.toml",
            "scenario": f"{self.scenario_tree}:{SCENARIOS}/{self.scenario}.toml",
        }

    def to_dict(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "files": self.files}


@dataclass(frozen=True)
class Comparison:
    """One A/B comparison to run interleaved: base side against head side, on one scenario."""

    kind: Kind
    scenario: str
    reason: str
    base: Side
    head: Side
    estimated_s: int = 0

    @property
    def base_target(self) -> str:
        return self.base.target_label

    @property
    def head_target(self) -> str:
        return self.head.target_label

    @property
    def base_files(self) -> dict[str, str]:
        return self.base.files

    @property
    def head_files(self) -> dict[str, str]:
        return self.head.files

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "scenario": self.scenario,
            "base_target": self.base_target,
            "head_target": self.head_target,
            "reason": self.reason,
            "estimated_s": self.estimated_s,
            "base": self.base.to_dict(),
            "head": self.head.to_dict(),
        }


@dataclass(frozen=True)
class Recording:
    """A run with nothing to compare against (a new target or scenario): stored, no verdict."""

    side: Side
    reason: str
    estimated_s: int = 0

    def to_dict(self) -> dict[str, object]:
        return {"reason": self.reason, "estimated_s": self.estimated_s, **self.side.to_dict()}


@dataclass(frozen=True)
class CiPlan:
    """What a pull request's performance check runs, and why."""

    base_ref: str
    head_ref: str
    base_sha: str  # the merge base of base_ref and head_ref: what the change is measured against
    head_sha: str
    profile: str
    default_target: str
    default_scenarios: tuple[str, ...]
    changes: tuple[FileChange, ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    recordings: tuple[Recording, ...] = ()
    notes: tuple[str, ...] = ()
    harness_changed: bool = False

    @property
    def empty(self) -> bool:
        return not self.comparisons and not self.recordings

    @property
    def estimated_s(self) -> int:
        return sum(c.estimated_s for c in self.comparisons) + sum(r.estimated_s for r in self.recordings)

    def to_dict(self) -> dict[str, object]:
        return {
            "format": PLAN_FORMAT,
            "base_ref": self.base_ref,
            "head_ref": self.head_ref,
            "base_sha": self.base_sha,
            "head_sha": self.head_sha,
            "profile": self.profile,
            "default_target": self.default_target,
            "default_scenarios": list(self.default_scenarios),
            "harness_changed": self.harness_changed,
            "estimated_s": self.estimated_s,
            "comparisons": [c.to_dict() for c in self.comparisons],
            "recordings": [r.to_dict() for r in self.recordings],
            "notes": list(self.notes),
            "changes": [dataclasses.asdict(c) for c in self.changes],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


# --- git ----------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except OSError as exc:
        raise GitError(f"cannot run git ({exc.strerror}); install git") from exc


def _git_text(repo: Path, *args: str, what: str) -> str:
    out = _git(repo, *args)
    if out.returncode != 0:
        detail = out.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"{what}: {detail[-1] if detail else f'git exited with {out.returncode}'}")
    return out.stdout.decode(errors="replace").strip()


def _check_repo(repo: Path) -> None:
    if not repo.is_dir():
        raise GitError(f"{repo} is not a directory; run dbperf ci in a clone of the project")
    if _git(repo, "rev-parse", "--show-toplevel").returncode != 0:
        raise GitError(f"{repo} is not inside a git repository; dbperf ci needs the project's git history")


def resolve_ref(repo: Path, ref: str) -> str:
    """The commit SHA ``ref`` names, or a :class:`GitError` saying how to get it."""
    _check_repo(repo)
    if not ref or ref.startswith("-"):
        raise GitError(f"invalid git ref {ref!r}")
    out = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if out.returncode != 0:
        hint = "fetch it first"
        if _git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() == b"true":
            hint = "this clone is shallow: use actions/checkout with fetch-depth: 0, or git fetch --unshallow"
        raise GitError(f"unknown git ref '{ref}' in {repo} ({hint})")
    return out.stdout.decode().strip()


def _merge_base(repo: Path, base: str, head: str, base_ref: str, head_ref: str) -> str:
    out = _git(repo, "merge-base", base, head)
    if out.returncode != 0:
        raise GitError(f"'{base_ref}' and '{head_ref}' share no history; compare refs of the same project")
    return out.stdout.decode().strip()


def _area(path: str) -> Area:
    parts = path.split("/")
    if parts[0] == "harness" or path == "pyproject.toml":
        return "harness"
    if parts[0] == "baselines":
        return "baseline"
    if parts[0] == SERVERS:
        return "target" if len(parts) == 2 and path.endswith(".toml") else "server-file"
    if parts[0] == SCENARIOS:
        return "scenario" if len(parts) == 2 and path.endswith(".toml") else "scenario-file"
    return "other"


def diff_changes(repo: Path, base_sha: str, head_sha: str) -> list[FileChange]:
    """``git diff --name-status`` between two commits, renames and copies detected, paths relative to
    ``repo`` (which may be a subfolder of the git work tree)."""
    args = (
        "diff",
        "--name-status",
        "-z",
        "-M",
        "-C",
        "--find-copies-harder",
        "--relative",
        "--no-color",
        "--no-ext-diff",
        base_sha,
        head_sha,
    )
    out = _git(repo, *args)
    if out.returncode != 0:
        raise GitError(f"git diff {base_sha[:12]} {head_sha[:12]} failed: {out.stderr.decode().strip()}")
    tokens = out.stdout.decode(errors="surrogateescape").split("\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(tokens) and tokens[i]:
        status = tokens[i]
        letter = status[0]
        if letter in "RC":
            old, new = tokens[i + 1], tokens[i + 2]
            similarity = int(status[1:]) if status[1:].isdigit() else None
            changes.append(FileChange(letter, new, old, similarity, _area(new)))
            i += 3
        else:
            changes.append(FileChange(letter, tokens[i + 1], area=_area(tokens[i + 1])))
            i += 2
    return changes


def materialise(repo: Path, ref: str, workdir: Path) -> Path:
    """Write ``servers/`` and ``scenarios/`` as they are at ``ref`` into ``workdir``; returns ``workdir``.

    Uses ``git archive`` of the project folder at ``ref`` (so it works when the project is a
    subfolder of a larger repository), extracted with tarfile's ``data`` filter (no links out, no
    device files). ``workdir`` is created; it must not already hold a ``servers`` or ``scenarios``.
    """
    sha = resolve_ref(repo, ref)
    top = Path(_git_text(repo, "rev-parse", "--show-toplevel", what="git rev-parse"))
    prefix = _git_text(repo, "rev-parse", "--show-prefix", what="git rev-parse").rstrip("/")
    treeish = f"{sha}:{prefix}" if prefix else sha
    # Run from the top level: in a subfolder git reads paths as relative to it, even inside a tree.
    listing = _git_text(top, "ls-tree", "--name-only", treeish, what=f"git ls-tree {ref}")
    folders = [name for name in (SERVERS, SCENARIOS) if name in listing.splitlines()]
    workdir.mkdir(parents=True, exist_ok=True)
    clash = [name for name in (SERVERS, SCENARIOS) if (workdir / name).exists()]
    if clash:
        raise HarnessError(f"{workdir} already holds {', '.join(clash)}; materialise into an empty folder")
    if not folders:
        return workdir
    out = _git(top, "archive", "--format=tar", treeish, "--", *folders)
    if out.returncode != 0:
        raise GitError(f"git archive {ref} failed: {out.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as archive:
        _extract(archive, workdir)
    return workdir


def _extract(archive: tarfile.TarFile, dest: Path) -> None:
    """Extract with tarfile's ``data`` filter, or, on Pythons before 3.11.4 (Debian 12 ships 3.11.2),
    only plain files and folders whose names stay inside ``dest``."""
    if hasattr(tarfile, "data_filter"):
        archive.extractall(dest, filter="data")
        return
    for member in archive.getmembers():
        name = posixpath.normpath(member.name)
        if name.startswith(("/", "../")) or name == ".." or not (member.isfile() or member.isdir()):
            continue
        target = dest / name
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        source = archive.extractfile(member)
        if source is not None:
            target.write_bytes(source.read())


# --- loading definitions from a tree --------------------------------------------------------------


def _relabel(exc: ConfigError, root: Path, tree: str) -> ConfigError:
    text = str(exc).replace(f"{root}/", "")
    return ConfigError(f"{text} (at {tree})")


def load_side(side: Side, trees: Mapping[Tree, Path], profile: str) -> tuple[ServerTarget, Scenario]:
    """The target and scenario one side runs, named with its labels (``T@base``, ``S@base``).

    ``trees`` maps ``"base"`` to a :func:`materialise`-d folder and ``"head"`` to the working tree.
    """
    target_root = trees[side.target_tree]
    try:
        target = load_target_file(target_root / SERVERS / f"{side.target}.toml")
    except ConfigError as exc:
        raise _relabel(exc, target_root, side.target_tree) from None
    scenario_root = trees[side.scenario_tree]
    try:
        scenario = load_scenario_file(scenario_root / SCENARIOS / f"{side.scenario}.toml", profile)
    except ConfigError as exc:
        raise _relabel(exc, scenario_root, side.scenario_tree) from None
    return (
        dataclasses.replace(target, name=side.target_label),
        dataclasses.replace(scenario, name=side.scenario_label),
    )


@dataclass
class _Trees:
    """Both materialised trees, with cached loads (a load error at head is the user's to fix)."""

    roots: dict[Tree, Path]
    profile: str

    def stems(self, tree: Tree, folder: str) -> set[str]:
        return {p.stem for p in (self.roots[tree] / folder).glob("*.toml")}

    def raw(self, tree: Tree, rel: str) -> dict[str, object]:
        try:
            return tomllib.loads((self.roots[tree] / rel).read_text())
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            return {}

    def target(self, tree: Tree, name: str) -> ServerTarget:
        try:
            return load_target_file(self.roots[tree] / SERVERS / f"{name}.toml")
        except ConfigError as exc:
            raise _relabel(exc, self.roots[tree], tree) from None

    def scenario(self, tree: Tree, name: str) -> Scenario:
        try:
            return load_scenario_file(self.roots[tree] / SCENARIOS / f"{name}.toml", self.profile)
        except ConfigError as exc:
            raise _relabel(exc, self.roots[tree], tree) from None


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def _config_ref(raw: Mapping[str, object]) -> str | None:
    value = raw.get("config_file")
    return posixpath.normpath(posixpath.join(SERVERS, value)) if isinstance(value, str) else None


def _script_ref(raw: Mapping[str, object]) -> str | None:
    value = raw.get("script")
    if isinstance(value, str) and ("/" in value or value.endswith(".lua")):
        return posixpath.normpath(posixpath.join(SCENARIOS, value))
    return None


# --- what changed, in words -------------------------------------------------------------------------


def _fmt(value: object) -> str:
    return "-" if value is None or value == "" else str(value)


def _cnf_settings(text: str) -> dict[str, str]:
    """An option file's settings as ``{"[section] name": value}``: comments, blank lines, spacing
    and ``-``/``_`` spelling ignored, the last of repeated settings kept (as the server reads it)."""
    settings: dict[str, str] = {}
    section = ""
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            continue
        if line.startswith("!"):  # !include / !includedir
            directive, _, argument = line.partition(" ")
            settings[f"{directive} {argument.strip()}"] = ""
            continue
        name, sep, value = line.partition("=")
        value = value.strip()
        if value[:1] in "\"'" and len(value) > 1 and value[-1] == value[0]:
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        settings[f"[{section}] {name.strip().lower().replace('-', '_')}"] = value if sep else ""
    return settings


def _cnf_diff(old: Mapping[str, str], new: Mapping[str, str], limit: int = 6) -> str:
    parts = [f"+{k}={new[k]}" if new[k] else f"+{k}" for k in new if k not in old]
    parts += [f"-{k}" for k in old if k not in new]
    parts += [f"{k} {old[k]} → {new[k]}" for k in new if k in old and old[k] != new[k]]
    shown = [p.replace("[mysqld] ", "").replace("[mariadbd] ", "") for p in parts[:limit]]
    return ", ".join(shown) + (f" and {len(parts) - limit} more" if len(parts) > limit else "")


def _target_effect(base: ServerTarget, head: ServerTarget, base_root: Path, head_root: Path) -> list[str]:
    """The effective differences between two definitions of a target; empty when there are none."""
    effects: list[str] = []
    for key in (
        "flavour",
        "version",
        "provider",
        "image",
        "binary",
        "cpuset",
        "client_cpuset",
        "cpus",
        "memory_limit",
        "host",
        "port",
        "database",
    ):
        old, new = getattr(base, key), getattr(head, key)
        if old != new:
            effects.append(f"{key} {_fmt(old)} → {_fmt(new)}")
    old_cf = base.config_file.relative_to(base_root).as_posix() if base.config_file else None
    new_cf = head.config_file.relative_to(head_root).as_posix() if head.config_file else None
    old_cnf = _cnf_settings(base.config_file.read_text()) if base.config_file else None
    new_cnf = _cnf_settings(head.config_file.read_text()) if head.config_file else None
    if old_cnf != new_cnf:
        what = f"config file {_fmt(old_cf)} → {_fmt(new_cf)}" if old_cf != new_cf else f"config file {new_cf}"
        effects.append(f"{what}: {_cnf_diff(old_cnf or {}, new_cnf or {})}")
    old_vars, new_vars = dict(base.variables), dict(head.variables)
    var_changes = [f"+{k}={new_vars[k]}" for k in sorted(new_vars.keys() - old_vars.keys())]
    var_changes += [f"-{k}" for k in sorted(old_vars.keys() - new_vars.keys())]
    var_changes += [
        f"{k} {old_vars[k]} → {new_vars[k]}"
        for k in sorted(old_vars.keys() & new_vars.keys())
        if old_vars[k] != new_vars[k]
    ]
    if var_changes:
        effects.append("variables " + ", ".join(var_changes))
    return effects


_WORKLOAD_FIELDS = (
    "script",
    "rand_type",
    "options",
    "tables",
    "table_size",
    "warmup_s",
    "time_s",
    "threads",
    "writes",
    "fresh_server",
    "percentile",
)
_JUDGING_FIELDS = ("repetitions", "min_effects", "gate_metrics")


def _scenario_effect(base: Scenario, head: Scenario) -> tuple[list[str], list[str]]:
    """(workload differences, judging-only differences) between two definitions of a scenario."""
    workload = [
        f"{k} {_fmt(getattr(base, k))} → {_fmt(getattr(head, k))}"
        for k in _WORKLOAD_FIELDS
        if getattr(base, k) != getattr(head, k)
    ]
    if not workload and (base.definition_hash != head.definition_hash):
        workload.append(f"script {head.script} changed")
    judging = [
        f"{k} {_fmt(getattr(base, k))} → {_fmt(getattr(head, k))}"
        for k in _JUDGING_FIELDS
        if getattr(base, k) != getattr(head, k)
    ]
    return workload, judging


def _estimate(scenario: Scenario, sides: int) -> int:
    per_run = scenario.warmup_s + scenario.time_s + START_OVERHEAD_S
    return sides * scenario.repetitions * len(scenario.threads) * per_run


# --- the planner -----------------------------------------------------------------------------------


@contextmanager
def _materialised(repo: Path, base_sha: str, head_sha: str, profile: str) -> Iterator[_Trees]:
    folder = Path(tempfile.mkdtemp(prefix="dbperf-ciplan-"))
    try:
        roots: dict[Tree, Path] = {
            "base": materialise(repo, base_sha, folder / "base"),
            "head": materialise(repo, head_sha, folder / "head"),
        }
        yield _Trees(roots, profile)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class _Builder:
    trees: _Trees
    changes: list[FileChange]
    default_target: str
    default_scenarios: tuple[str, ...]
    comparisons: list[Comparison] = dataclasses.field(default_factory=list)
    recordings: list[Recording] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def touched(self) -> set[str]:
        return {c.path for c in self.changes} | {c.old_path for c in self.changes if c.old_path}

    def _source(self, path: str, letter: str) -> str | None:
        for change in self.changes:
            if change.path == path and change.status == letter and change.old_path:
                return change.old_path
        return None

    def _compare(self, kind: Kind, base: Side, head: Side, reason: str) -> None:
        estimate = _estimate(self.trees.scenario("head", head.scenario), 2)
        self.comparisons.append(Comparison(kind, head.scenario, reason, base, head, estimate))

    def _record(self, side: Side, reason: str) -> None:
        estimate = _estimate(self.trees.scenario("head", side.scenario), 1)
        self.recordings.append(Recording(side, reason, estimate))

    def targets(self) -> None:
        head_names = self.trees.stems("head", SERVERS)
        base_names = self.trees.stems("base", SERVERS)
        touched = self.touched
        renamed_from: set[str] = set()
        for name in sorted(head_names):
            path = f"{SERVERS}/{name}.toml"
            kind: Kind = "target"
            counterpart: str | None = name if name in base_names else None
            how = ""
            if (old := self._source(path, "R")) and _area(old) == "target":
                counterpart = _stem(old)
                how = f"renamed from {counterpart}; "
                renamed_from.add(counterpart)
            elif counterpart is None and (old := self._source(path, "C")) and _area(old) == "target":
                counterpart, kind = _stem(old), "copied-target"
                how = f"copy of {counterpart}; "
            refs = {path, _config_ref(self.trees.raw("head", path))}
            if counterpart is not None:
                base_path = f"{SERVERS}/{counterpart}.toml"
                refs |= {base_path, _config_ref(self.trees.raw("base", base_path))}
            if not refs & touched:
                continue
            head_target = self.trees.target("head", name)
            if counterpart is None:
                for scenario in self.default_scenarios:
                    self._record(
                        Side(name, "head", name, scenario, "head", scenario),
                        "new target with no earlier definition: recorded only, no verdict",
                    )
                continue
            try:
                base_target = self.trees.target("base", counterpart)
            except ConfigError as exc:
                self.notes.append(f"{path}: the base definition does not load ({exc}); nothing to compare")
                continue
            effects = _target_effect(base_target, head_target, self.trees.roots["base"], self.trees.roots["head"])
            if not effects:
                self.notes.append(
                    f"{path}: no effective change ({how}comments, description or file moves only); nothing to compare"
                )
                continue
            reason = how + "; ".join(effects)
            for scenario in self.default_scenarios:
                self._compare(
                    kind,
                    Side(counterpart, "base", counterpart + BASE_SUFFIX, scenario, "head", scenario),
                    Side(name, "head", name, scenario, "head", scenario),
                    reason,
                )
        for name in sorted(base_names - head_names - renamed_from):
            self.notes.append(f"{SERVERS}/{name}.toml: target removed; nothing to run")

    def scenarios(self) -> None:
        head_names = self.trees.stems("head", SCENARIOS)
        base_names = self.trees.stems("base", SCENARIOS)
        touched = self.touched
        renamed_from: set[str] = set()
        target = self.default_target
        for name in sorted(head_names):
            path = f"{SCENARIOS}/{name}.toml"
            counterpart: str | None = name if name in base_names else None
            if (old := self._source(path, "R")) and _area(old) == "scenario":
                counterpart = _stem(old)
                renamed_from.add(counterpart)
            refs = {path, _script_ref(self.trees.raw("head", path))}
            if counterpart is not None:
                base_path = f"{SCENARIOS}/{counterpart}.toml"
                refs |= {base_path, _script_ref(self.trees.raw("base", base_path))}
            if not refs & touched:
                continue
            head_scenario = self.trees.scenario("head", name)
            head_side = Side(target, "head", target, name, "head", name)
            if counterpart is None:
                self._record(head_side, "new scenario with no earlier definition: recorded only, no verdict")
                continue
            try:
                base_scenario = self.trees.scenario("base", counterpart)
            except ConfigError as exc:
                self.notes.append(f"{path}: the base definition does not load ({exc}); recorded only")
                self._record(head_side, "scenario whose base definition does not load: recorded only")
                continue
            workload, judging = _scenario_effect(base_scenario, head_scenario)
            if not workload:
                what = (
                    f"judging settings changed ({'; '.join(judging)})"
                    if judging
                    else (f"no change to the workload of profile '{self.trees.profile}'")
                )
                self.notes.append(f"{path}: {what}; the workload is the same, nothing to compare")
                continue
            prefix = f"renamed from {counterpart}; " if counterpart != name else ""
            self._compare(
                "scenario",
                Side(target, "head", target, counterpart, "base", counterpart + BASE_SUFFIX),
                head_side,
                prefix + "; ".join(workload),
            )
        for name in sorted(base_names - head_names - renamed_from):
            self.notes.append(f"{SCENARIOS}/{name}.toml: scenario removed; nothing to run")

    def harness(self) -> bool:
        changed = sorted(c.path for c in self.changes if c.area == "harness")
        if not changed:
            return False
        target = self.default_target
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        for scenario in self.default_scenarios:
            self._compare(
                "harness-aa",
                Side(target, "head", target + AA_SUFFIX, scenario, "head", scenario),
                Side(target, "head", target, scenario, "head", scenario),
                f"harness changed ({shown}): A/A check, identical sides must not give a regression",
            )
        return True

    def leftovers(self) -> None:
        referenced: set[str] = set()
        for tree in ("base", "head"):
            for name in self.trees.stems(tree, SERVERS):
                referenced.add(_config_ref(self.trees.raw(tree, f"{SERVERS}/{name}.toml")) or "")
            for name in self.trees.stems(tree, SCENARIOS):
                referenced.add(_script_ref(self.trees.raw(tree, f"{SCENARIOS}/{name}.toml")) or "")
        for change in self.changes:
            if (
                change.area in ("server-file", "scenario-file")
                and change.path not in referenced
                and (change.old_path is None or change.old_path not in referenced)
            ):
                self.notes.append(f"{change.path}: not referenced by any target or scenario; nothing to run")
        baselines = [c.path for c in self.changes if c.area == "baseline"]
        if baselines:
            self.notes.append(
                f"{len(baselines)} baseline file(s) changed: they judge local and nightly runs "
                "(dbperf's baseline gate), not A/B comparisons; nothing to run"
            )


def plan(
    repo: Path,
    base_ref: str,
    head_ref: str,
    *,
    profile: str,
    default_scenarios: Sequence[str],
    default_target: str = DEFAULT_TARGET,
    only: Sequence[str] = (),
) -> CiPlan:
    """Decide the comparisons that the change from ``base_ref`` to ``head_ref`` needs.

    The change is measured from the merge base (``git diff base...head``), as a pull request shows
    it. ``only`` keeps the comparisons and recordings whose scenario matches one of the shell
    patterns (``oltp_*``). Raises :class:`GitError` for refs or repositories git cannot read and
    :class:`ConfigError` for a head definition that does not load.
    """
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile '{profile}'; choose one of {', '.join(PROFILES)}")
    scenarios = tuple(dict.fromkeys(default_scenarios))
    if not scenarios:
        raise ConfigError("the default scenario set is empty; pass --scenarios")
    repo = repo.resolve()
    base_tip = resolve_ref(repo, base_ref)
    head_sha = resolve_ref(repo, head_ref)
    base_sha = _merge_base(repo, base_tip, head_sha, base_ref, head_ref)
    changes = diff_changes(repo, base_sha, head_sha)
    with _materialised(repo, base_sha, head_sha, profile) as trees:
        for name in scenarios:
            if name not in trees.stems("head", SCENARIOS):
                known = ", ".join(sorted(trees.stems("head", SCENARIOS))) or "none"
                raise ConfigError(f"default scenario '{name}' is not defined at {head_ref} (known: {known})")
        builder = _Builder(trees, changes, default_target, scenarios)
        builder.targets()
        builder.scenarios()
        harness_changed = builder.harness()
        sides = [s for c in builder.comparisons for s in (c.base, c.head)] + [r.side for r in builder.recordings]
        if any(s.target == default_target and s.target_tree == "head" for s in sides):
            if default_target not in trees.stems("head", SERVERS):
                known = ", ".join(sorted(trees.stems("head", SERVERS))) or "none"
                raise ConfigError(
                    f"default target '{default_target}' is not defined at {head_ref} (known: {known}); pass --server"
                )
            trees.target("head", default_target)
        builder.leftovers()
    comparisons, recordings, notes = builder.comparisons, builder.recordings, builder.notes
    if only:

        def keep(name: str) -> bool:
            return any(fnmatch.fnmatchcase(name, pattern) for pattern in only)

        dropped = sum(not keep(c.scenario) for c in comparisons) + sum(not keep(r.side.scenario) for r in recordings)
        comparisons = [c for c in comparisons if keep(c.scenario)]
        recordings = [r for r in recordings if keep(r.side.scenario)]
        if dropped:
            notes.append(f"{dropped} run(s) left out by the scenario filter {', '.join(only)}")
    return CiPlan(
        base_ref=base_ref,
        head_ref=head_ref,
        base_sha=base_sha,
        head_sha=head_sha,
        profile=profile,
        default_target=default_target,
        default_scenarios=scenarios,
        changes=tuple(changes),
        comparisons=tuple(comparisons),
        recordings=tuple(recordings),
        notes=tuple(notes),
        harness_changed=harness_changed,
    )
