"""Plan a pull request's performance check from the git diff between two refs (``dbperf ci plan``).

The plan answers one question: *which A/B comparisons does this change need?* It reads
``git diff --name-status base...head`` (renames and copies detected), loads the definitions that
changed on both sides, and compares their *effective* content, so an edited comment, a new
description or a pure rename costs no runner time. The rules, each one change isolated:

``server``
    A server whose effective definition differs between base and head -- its TOML (version
    pin, image, binary, variables, CPU placement, memory) or the ``config_file`` it references on
    either side -- is compared as ``T@base`` (definitions from the base tree) against ``T`` (head)
    on the scenarios its changed settings exercise (:mod:`harness.ci.targets`: a durability setting on
    the write scenarios and tpcc, a buffer pool on the read scenarios whose data does not fit ...),
    and on the default set where a changed setting is of no class (a new build, placement, an unlisted
    name). Scenarios named with ``--scenario`` replace both; what the change would also aim at is a
    note. A renamed server compares the old name at base with the new one.
``copied-server``
    A new server that git finds was copied from an existing one (``--find-copies-harder``) is
    compared against that source as it is at base: "I copied mariadb-local and switched the thread
    pool on" asks exactly "is the thread pool faster than mariadb-local?".
``scenario``
    A scenario whose workload differs for the chosen profile (its TOML, or the Lua script it
    references) runs as ``S@base`` against ``S`` on the default server, head definition on both
    sides. Changes that only alter judging (repetitions, ``min_effect``, ``gate``) or another
    profile are reported as notes: the workload is the same, an A/B would compare it with itself.
``harness-aa``
    A change to the harness itself (``harness/**``, ``pyproject.toml``) cannot be A/B-tested by
    the harness it changes (that needs two installations; out of scope). It gets an *A/A* check
    instead: the default server against itself on the default scenarios, both from head. This
    proves the new code still runs end to end, and guards the statistics against false alarms --
    a REGRESSION verdict between identical configurations is a harness bug or a noisy runner.

A new server or scenario with nothing to compare against is *recorded only* (a
:class:`Recording`: run once, stored, no verdict); deleted ones and changes to ``baselines/`` are
notes. Whatever is loaded from the base tree gets a distinct name (``@base``) so its runs never mix
with the head's in the store.

Executing a plan (``dbperf ci run``): :func:`materialise` the base tree, take the working tree as
the head tree, and turn each :class:`Side` into a ``(Server, Scenario)`` with
:func:`load_side`.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.ci.effects import (
    changed_names,
    estimate_s,
    scenario_changes,
    scenario_effect,
    server_changes,
    server_effect,
)
from harness.ci.git import area_of, diff_changes, merge_base, resolve_ref
from harness.ci.records import (
    AA_SUFFIX,
    BASE_SUFFIX,
    DEFAULT_TARGET,
    SCENARIOS,
    SERVERS,
    CiPlan,
    Comparison,
    FileChange,
    Kind,
    Recording,
    Side,
)
from harness.ci.scope import class_of
from harness.ci.targets import Pick, classify, picks
from harness.ci.trees import Trees, config_ref, materialised, stem
from harness.config.scenarios import PROFILES
from harness.errors import ConfigError
from harness.model import DefinitionChange, Scenario, Server
from harness.model.definition_change import CONTENTS

NAMED = "named with --scenario"


@dataclass
class _Builder:
    trees: Trees
    changes: list[FileChange]
    default_server: str
    default_scenarios: tuple[str, ...]
    named: bool = False
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

    def _compare(
        self,
        kind: Kind,
        base: Side,
        head: Side,
        reason: str,
        edits: Sequence[DefinitionChange] = (),
        changed: tuple[str, ...] = (),
        chosen: str = "",
    ) -> None:
        estimate = estimate_s(self.trees.scenario("head", head.scenario), 2)
        labelled = tuple(dataclasses.replace(e, base=base.server_label, head=head.server_label) for e in edits)
        self.comparisons.append(
            Comparison(kind, head.scenario, reason, base, head, estimate, labelled, changed=changed, chosen=chosen)
        )

    @property
    def default_why(self) -> str:
        return NAMED if self.named else "default set"

    def catalogue(self) -> dict[str, Scenario]:
        """Every scenario of the head tree that loads, for the profile (the targets are chosen from it)."""
        found: dict[str, Scenario] = {}
        for name in sorted(self.trees.stems("head", SCENARIOS)):
            try:
                found[name] = self.trees.scenario("head", name)
            except ConfigError:
                continue  # a scenario that does not load is not a target (a changed one fails on its own)
        return found

    def aimed(self, base: Server, head: Server, names: Sequence[str]) -> list[Pick]:
        """The scenarios a server change runs, each with why it was chosen (:mod:`harness.ci.targets`)."""
        classes, unclassed = classify(names, class_of)
        targeted = picks(classes, self.catalogue(), base, head) if classes else []
        if self.named:
            missed = [p.scenario for p in targeted if p.scenario not in self.default_scenarios]
            if missed:
                what = ", ".join(f"{', '.join(n)} ({c})" for c, n in classes.items())
                self.notes.append(
                    f"{what} also bites in {', '.join(missed)}: not run, --scenario names "
                    f"{', '.join(self.default_scenarios)}"
                )
            return [Pick(s, NAMED) for s in self.default_scenarios]
        out: dict[str, list[str]] = {}
        if unclassed or not targeted:
            why = "default set"
            if unclassed:
                why += f" ({', '.join(unclassed)}: in no class of setting)"
            elif classes:
                why += f" ({', '.join(classes)}: no scenario of the class at head)"
            out = {s: [why] for s in self.default_scenarios}
        for pick in targeted:
            out.setdefault(pick.scenario, []).append(pick.why)
        return [Pick(s, "; ".join(whys)) for s, whys in out.items()]

    def _record(self, side: Side, reason: str) -> None:
        estimate = estimate_s(self.trees.scenario("head", side.scenario), 1)
        self.recordings.append(Recording(side, reason, estimate))

    def servers(self) -> None:
        head_names = self.trees.stems("head", SERVERS)
        base_names = self.trees.stems("base", SERVERS)
        touched = self.touched
        renamed_from: set[str] = set()
        for name in sorted(head_names):
            path = f"{SERVERS}/{name}.toml"
            kind: Kind = "server"
            counterpart: str | None = name if name in base_names else None
            how = ""
            if (old := self._source(path, "R")) and area_of(old) == "server":
                counterpart = stem(old)
                how = f"renamed from {counterpart}; "
                renamed_from.add(counterpart)
            elif counterpart is None and (old := self._source(path, "C")) and area_of(old) == "server":
                counterpart, kind = stem(old), "copied-server"
                how = f"copy of {counterpart}; "
            refs = {path, config_ref(self.trees.raw("head", path))}
            if counterpart is not None:
                base_path = f"{SERVERS}/{counterpart}.toml"
                refs |= {base_path, config_ref(self.trees.raw("base", base_path))}
            if not refs & touched:
                continue
            head_server = self.trees.server("head", name)
            if counterpart is None:
                for scenario in self.default_scenarios:
                    self._record(
                        Side(name, "head", name, scenario, "head", scenario),
                        f"new server with no earlier definition: recorded only, no verdict ({self.default_why})",
                    )
                continue
            try:
                base_server = self.trees.server("base", counterpart)
            except ConfigError as exc:
                self.notes.append(f"{path}: the base definition does not load ({exc}); nothing to compare")
                continue
            effects = server_effect(base_server, head_server, self.trees.roots["base"], self.trees.roots["head"])
            if not effects:
                self.notes.append(
                    f"{path}: no effective change ({how}comments, description or file moves only); nothing to compare"
                )
                continue
            reason = how + "; ".join(effects)
            roots = self.trees.roots
            edits = server_changes(base_server, head_server, roots["base"], roots["head"], path)
            names = changed_names(base_server, head_server)
            for pick in self.aimed(base_server, head_server, names):
                scenario = pick.scenario
                self._compare(
                    kind,
                    Side(counterpart, "base", counterpart + BASE_SUFFIX, scenario, "head", scenario),
                    Side(name, "head", name, scenario, "head", scenario),
                    reason,
                    edits,
                    names,
                    pick.why,
                )
        for name in sorted(base_names - head_names - renamed_from):
            self.notes.append(f"{SERVERS}/{name}.toml: server removed; nothing to run")

    def scenarios(self) -> None:
        head_names = self.trees.stems("head", SCENARIOS)
        base_names = self.trees.stems("base", SCENARIOS)
        touched = self.touched
        renamed_from: set[str] = set()
        server = self.default_server
        for name in sorted(head_names):
            path = f"{SCENARIOS}/{name}.toml"
            counterpart: str | None = name if name in base_names else None
            if (old := self._source(path, "R")) and area_of(old) == "scenario":
                counterpart = stem(old)
                renamed_from.add(counterpart)
            refs = {path, *self.trees.script_refs("head", path)}
            if counterpart is not None:
                base_path = f"{SCENARIOS}/{counterpart}.toml"
                refs |= {base_path, *self.trees.script_refs("base", base_path)}
            if not refs & touched:
                continue
            head_scenario = self.trees.scenario("head", name)
            head_side = Side(server, "head", server, name, "head", name)
            if counterpart is None:
                self._record(head_side, "new scenario with no earlier definition: recorded only, no verdict")
                continue
            try:
                base_scenario = self.trees.scenario("base", counterpart)
            except ConfigError as exc:
                self.notes.append(f"{path}: the base definition does not load ({exc}); recorded only")
                self._record(head_side, "scenario whose base definition does not load: recorded only")
                continue
            workload, judging = scenario_effect(base_scenario, head_scenario)
            if not workload:
                what = (
                    f"judging settings changed ({'; '.join(judging)})"
                    if judging
                    else (f"no change to the workload of profile '{self.trees.profile}'")
                )
                self.notes.append(f"{path}: {what}; the workload is the same, nothing to compare")
                continue
            prefix = f"renamed from {counterpart}; " if counterpart != name else ""
            edits = [
                dataclasses.replace(e, scenario=name)
                for e in scenario_changes(base_scenario, head_scenario, self.trees.roots["head"], path)
            ]
            own = {path, f"{SCENARIOS}/{counterpart}.toml"}
            edits += [DefinitionChange(ref, CONTENTS, scenario=name) for ref in sorted((refs & touched) - own)]
            self._compare(
                "scenario",
                Side(server, "head", server, counterpart, "base", counterpart + BASE_SUFFIX),
                head_side,
                prefix + "; ".join(workload),
                edits,
                chosen="the changed scenario",
            )
        for name in sorted(base_names - head_names - renamed_from):
            self.notes.append(f"{SCENARIOS}/{name}.toml: scenario removed; nothing to run")

    def harness(self) -> bool:
        changed = sorted(c.path for c in self.changes if c.area == "harness")
        if not changed:
            return False
        server = self.default_server
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        for scenario in self.default_scenarios:
            self._compare(
                "harness-aa",
                Side(server, "head", server + AA_SUFFIX, scenario, "head", scenario),
                Side(server, "head", server, scenario, "head", scenario),
                f"harness changed ({shown}): A/A check, identical sides must not give a regression",
                chosen=self.default_why,
            )
        return True

    def leftovers(self) -> None:
        referenced: set[str] = set()
        for tree in ("base", "head"):
            for name in self.trees.stems(tree, SERVERS):
                referenced.add(config_ref(self.trees.raw(tree, f"{SERVERS}/{name}.toml")) or "")
            for name in self.trees.stems(tree, SCENARIOS):
                referenced |= self.trees.script_refs(tree, f"{SCENARIOS}/{name}.toml")
        for change in self.changes:
            if (
                change.area in ("server-file", "scenario-file")
                and change.path not in referenced
                and (change.old_path is None or change.old_path not in referenced)
            ):
                self.notes.append(f"{change.path}: not referenced by any server or scenario; nothing to run")
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
    default_server: str = DEFAULT_TARGET,
    only: Sequence[str] = (),
    named: bool = False,
) -> CiPlan:
    """Decide the comparisons that the change from ``base_ref`` to ``head_ref`` needs.

    The change is measured from the merge base (``git diff base...head``), as a pull request shows
    it. ``only`` keeps the comparisons and recordings whose scenario matches one of the shell
    patterns (``oltp_*``). ``named``: ``default_scenarios`` are the user's (``--scenario``), run as they
    are instead of the scenarios a server change aims at. Raises :class:`GitError` for refs or
    repositories git cannot read and :class:`ConfigError` for a head definition that does not load.
    """
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile '{profile}'; choose one of {', '.join(PROFILES)}")
    scenarios = tuple(dict.fromkeys(default_scenarios))
    if not scenarios:
        raise ConfigError("the scenario selection is empty; pass --scenario NAME (names, shell patterns or all)")
    repo = repo.resolve()
    base_tip = resolve_ref(repo, base_ref)
    head_sha = resolve_ref(repo, head_ref)
    base_sha = merge_base(repo, base_tip, head_sha, base_ref, head_ref)
    changes = diff_changes(repo, base_sha, head_sha)
    with materialised(repo, base_sha, head_sha, profile) as trees:
        for name in scenarios:
            if name not in trees.stems("head", SCENARIOS):
                known = ", ".join(sorted(trees.stems("head", SCENARIOS))) or "none"
                what = f"scenario '{name}' (named with --scenario)" if named else f"default scenario '{name}'"
                raise ConfigError(f"{what} is not defined at {head_ref} (known: {known})")
        builder = _Builder(trees, changes, default_server, scenarios, named)
        builder.servers()
        builder.scenarios()
        harness_changed = builder.harness()
        sides = [s for c in builder.comparisons for s in (c.base, c.head)] + [r.side for r in builder.recordings]
        if any(s.server == default_server and s.server_tree == "head" for s in sides):
            if default_server not in trees.stems("head", SERVERS):
                known = ", ".join(sorted(trees.stems("head", SERVERS))) or "none"
                raise ConfigError(
                    f"default server '{default_server}' is not defined at {head_ref} (known: {known}); pass --server"
                )
            trees.server("head", default_server)
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
        default_server=default_server,
        default_scenarios=scenarios,
        changes=tuple(changes),
        comparisons=tuple(comparisons),
        recordings=tuple(recordings),
        notes=tuple(dict.fromkeys(notes)),
        harness_changed=harness_changed,
        scenarios_named=named,
    )
