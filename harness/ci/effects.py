"""What changed, in words: the effective differences between two definitions of a server or a scenario.

Comments, blank lines, spacing and ``-``/``_`` spelling in a my.cnf are not changes; a description or
a judging setting (repetitions, minimum effects) is not a workload change.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from harness.ci.records import START_OVERHEAD_S
from harness.model import Scenario, Server


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


def server_effect(base: Server, head: Server, base_root: Path, head_root: Path) -> list[str]:
    """The effective differences between two definitions of a server; empty when there are none."""
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


def scenario_effect(base: Scenario, head: Scenario) -> tuple[list[str], list[str]]:
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


def estimate_s(scenario: Scenario, sides: int) -> int:
    per_run = scenario.warmup_s + scenario.time_s + START_OVERHEAD_S
    return sides * scenario.repetitions * len(scenario.threads) * per_run
