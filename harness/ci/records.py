"""The records of a pull-request plan: what changed, which comparisons run, and why."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Literal

from harness.model import DefinitionChange, RunKind
from harness.model.time_estimate import PlanEstimate

Tree = Literal["base", "head"]
Kind = Literal["server", "copied-server", "scenario", "harness-aa"]
Area = Literal["server", "server-file", "scenario", "scenario-file", "harness", "baseline", "other"]

PLAN_FORMAT = "dbperf.ciplan/1"
SERVERS = "servers"
SCENARIOS = "scenarios"
DEFAULT_TARGET = "mariadb-local"
#: The small default set: the pure read path (CPU cost per query) and a read/write mix (flushing,
#: locking).
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
    """One side of a comparison: which server and scenario, loaded from which tree, stored as what."""

    server: str
    server_tree: Tree
    server_label: str
    scenario: str
    scenario_tree: Tree
    scenario_label: str

    @property
    def files(self) -> dict[str, str]:
        """The definition files this side is loaded from, as ``tree:path``."""
        return {
            "server": f"{self.server_tree}:{SERVERS}/{self.server}.toml",
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
    #: what changed between the sides, setting by setting (the reason's words as records)
    edits: tuple[DefinitionChange, ...] = ()
    #: what the comparison measures: cost (instructions and the work vector), timing, or both
    kinds: tuple[RunKind, ...] = ("time", "cost")
    #: the names of the settings that changed (config-file and [variables] names, server fields)
    changed: tuple[str, ...] = ()
    #: why this scenario: the class of the changed setting that it exercises, the changed scenario itself,
    #: the default set, or named with --scenario (harness.ci.targets)
    chosen: str = ""

    @property
    def base_server(self) -> str:
        return self.base.server_label

    @property
    def head_server(self) -> str:
        return self.head.server_label

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
            "base_server": self.base_server,
            "head_server": self.head_server,
            "reason": self.reason,
            "chosen": self.chosen,
            "kinds": list(self.kinds),
            "changed": list(self.changed),
            "estimated_s": self.estimated_s,
            "base": self.base.to_dict(),
            "head": self.head.to_dict(),
            "edits": [dataclasses.asdict(e) for e in self.edits],
        }


@dataclass(frozen=True)
class Recording:
    """A run with nothing to compare against (a new server or scenario): stored, no verdict."""

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
    default_server: str
    default_scenarios: tuple[str, ...]  # the default set, or the scenarios named with --scenario
    changes: tuple[FileChange, ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    recordings: tuple[Recording, ...] = ()
    notes: tuple[str, ...] = ()
    harness_changed: bool = False
    #: what the scope left out of the fan-out, and why (a server filter, timing without power)
    left_out: tuple[str, ...] = ()
    estimate: PlanEstimate | None = None
    #: the scenarios were named with --scenario (never called "default" then)
    scenarios_named: bool = False

    @property
    def empty(self) -> bool:
        return not self.comparisons and not self.recordings

    @property
    def estimated_s(self) -> int:
        if self.estimate is not None:
            return round(self.estimate.seconds)
        return sum(c.estimated_s for c in self.comparisons) + sum(r.estimated_s for r in self.recordings)

    def to_dict(self) -> dict[str, object]:
        return {
            "format": PLAN_FORMAT,
            "base_ref": self.base_ref,
            "head_ref": self.head_ref,
            "base_sha": self.base_sha,
            "head_sha": self.head_sha,
            "profile": self.profile,
            "default_server": self.default_server,
            "default_scenarios": list(self.default_scenarios),
            "scenarios_named": self.scenarios_named,
            "harness_changed": self.harness_changed,
            "estimated_s": self.estimated_s,
            "comparisons": [c.to_dict() for c in self.comparisons],
            "recordings": [r.to_dict() for r in self.recordings],
            "notes": list(self.notes),
            "left_out": list(self.left_out),
            "estimate": self.estimate.to_dict() if self.estimate else None,
            "changes": [dataclasses.asdict(c) for c in self.changes],
        }

    @property
    def edits(self) -> tuple[DefinitionChange, ...]:
        """Every comparison's changes once (a server change is compared on each default scenario)."""
        return tuple(dict.fromkeys(e for c in self.comparisons for e in c.edits))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)
