"""What changed, in words: the effective differences between two definitions of a server or a scenario.

Comments, blank lines, spacing and ``-``/``_`` spelling in a my.cnf are not changes; a description or
a judging setting (repetitions, minimum effects) is not a workload change.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path

from harness.ci.records import START_OVERHEAD_S
from harness.config.option_names import server_setting_names, setting_name
from harness.model import ChangeStatus, DefinitionChange, Scenario, Server
from harness.servers.variables import PINNED, PINNED_BY_FLAVOUR


def _fmt(value: object) -> str:
    return "-" if value is None or value == "" else str(value)


def _cnf_entries(text: str) -> dict[str, tuple[str, int]]:
    """An option file's settings as ``{"[section] name": (value, line)}``: comments, blank lines, spacing
    and ``-``/``_`` spelling ignored, the last of repeated settings kept (as the server reads it)."""
    settings: dict[str, tuple[str, int]] = {}
    section = ""
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = raw_line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            continue
        if line.startswith("!"):  # !include / !includedir
            directive, _, argument = line.partition(" ")
            settings[f"{directive} {argument.strip()}"] = ("", number)
            continue
        name, sep, value = line.partition("=")
        value = value.strip()
        if value[:1] in "\"'" and len(value) > 1 and value[-1] == value[0]:
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        key = f"[{section}] {name.strip().lower().replace('-', '_')}"
        settings[key] = (value if sep else "", number)  # repeated: the last one's value and line
    return settings


def _cnf_settings(text: str) -> dict[str, str]:
    """An option file's settings as ``{"[section] name": value}`` (see :func:`_cnf_entries`)."""
    return {key: value for key, (value, _) in _cnf_entries(text).items()}


def _cnf_diff(old: Mapping[str, str], new: Mapping[str, str], limit: int = 6) -> str:
    parts = [f"+{k}={new[k]}" if new[k] else f"+{k}" for k in new if k not in old]
    parts += [f"-{k}" for k in old if k not in new]
    parts += [f"{k} {old[k]} → {new[k]}" for k in new if k in old and old[k] != new[k]]
    shown = [p.replace("[mysqld] ", "").replace("[mariadbd] ", "") for p in parts[:limit]]
    return ", ".join(shown) + (f" and {len(parts) - limit} more" if len(parts) > limit else "")


_SERVER_FIELDS = (
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
)


def server_effect(base: Server, head: Server, base_root: Path, head_root: Path) -> list[str]:
    """The effective differences between two definitions of a server; empty when there are none."""
    effects: list[str] = []
    for key in _SERVER_FIELDS:
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


def _status(old: object, new: object) -> ChangeStatus:
    return "added" if old in (None, "") else "removed" if new in (None, "") else "changed"


def _presence(in_base: bool, in_head: bool) -> ChangeStatus:
    return "changed" if in_base and in_head else "added" if in_head else "removed"


def toml_line(text: str, key: str, table: str = "") -> int | None:
    """The line of ``key = ...`` in a TOML file's top level (or in ``[table]``), else of ``table = {...}``."""
    current = ""
    fallback = None
    pattern = re.compile(rf"""\s*["']?{re.escape(key)}["']?\s*=""")
    for number, line in enumerate(text.splitlines(), start=1):
        header = re.match(r"\s*\[+\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1)
            if table and current == table:
                fallback = fallback or number
            continue
        if current == table and pattern.match(line):
            return number
        if table and not current and re.match(rf"\s*{re.escape(table)}\s*=", line):
            fallback = number  # an inline table
    return fallback


def server_changes(
    base: Server, head: Server, base_root: Path, head_root: Path, head_file: str
) -> list[DefinitionChange]:
    """:func:`server_effect` as records: each differing field, variable and option-file setting, with its
    line in the head's files (``head_file``: the head's server TOML, repository-relative)."""
    try:
        toml_text = (head_root / head_file).read_text()
    except OSError:
        toml_text = ""
    changes: list[DefinitionChange] = []
    for key in _SERVER_FIELDS:
        old, new = getattr(base, key), getattr(head, key)
        if old != new:
            line = toml_line(toml_text, key)
            changes.append(DefinitionChange(head_file, key, _text(old), _text(new), _status(old, new), line))
    old_cf = base.config_file.relative_to(base_root).as_posix() if base.config_file else None
    new_cf = head.config_file.relative_to(head_root).as_posix() if head.config_file else None
    if old_cf != new_cf:
        changes.append(
            DefinitionChange(
                head_file, "config_file", old_cf or "", new_cf or "", _status(old_cf, new_cf),
                toml_line(toml_text, "config_file"),
            )
        )  # fmt: skip
    old_cnf = _cnf_entries(base.config_file.read_text()) if base.config_file else {}
    new_cnf = _cnf_entries(head.config_file.read_text()) if head.config_file else {}
    cnf_file = new_cf or old_cf or head_file
    for key in [*new_cnf, *(k for k in old_cnf if k not in new_cnf)]:
        old_value, new_value = old_cnf.get(key), new_cnf.get(key)
        if old_value is not None and new_value is not None and old_value[0] == new_value[0]:
            continue
        section, _, name = key.rpartition("] ")
        changes.append(
            DefinitionChange(
                cnf_file,
                name if section else key,
                old_value[0] if old_value else "",
                new_value[0] if new_value else "",
                _presence(old_value is not None, new_value is not None),
                new_value[1] if new_value else None,
                section.lstrip("[") if section else "",
            )
        )
    old_vars, new_vars = dict(base.variables), dict(head.variables)
    for name in sorted(old_vars.keys() | new_vars.keys()):
        old, new = old_vars.get(name), new_vars.get(name)
        if old != new:
            status = _presence(name in old_vars, name in new_vars)
            line = toml_line(toml_text, name, "variables") if name in new_vars else None
            changes.append(DefinitionChange(head_file, name, _text(old), _text(new), status, line, "variables"))
    return [_with_base_value(change, base) for change in changes]


def _with_base_value(change: DefinitionChange, base: Server) -> DefinitionChange:
    """An added setting with the value dbperf pinned on the base (``innodb_flush_log_at_trx_commit = 1`` added:
    before, 2), so the change reads as the old and new effective values."""
    if change.status != "added" or change.old or change.section not in ("variables", "mysqld", "server", "mariadb"):
        return change
    name = setting_name(change.name, server_setting_names(base.flavour, base.version))
    pinned = {**PINNED, **PINNED_BY_FLAVOUR.get(base.flavour, {})}
    before = None if change.name in base.variables else pinned.get(name)
    return dataclasses.replace(change, old=before) if before else change


def _text(value: object) -> str:
    return "" if value is None else str(value)


def changed_names(base: Server, head: Server) -> tuple[str, ...]:
    """The names of what differs between two definitions of a server: its fields (``version``,
    ``image``, ``cpuset`` ...), and the settings of its config file and ``[variables]`` (``innodb_buffer_pool_size``,
    sections and ``-``/``_`` spelling dropped), each once, in a stable order."""
    names = [key for key in _SERVER_FIELDS if getattr(base, key) != getattr(head, key)]
    old_cnf = _cnf_settings(base.config_file.read_text()) if base.config_file else {}
    new_cnf = _cnf_settings(head.config_file.read_text()) if head.config_file else {}
    names += [k.split("] ", 1)[-1] for k in sorted(old_cnf.keys() | new_cnf.keys()) if old_cnf.get(k) != new_cnf.get(k)]
    old_vars, new_vars = dict(base.variables), dict(head.variables)
    names += [
        k.replace("-", "_") for k in sorted(old_vars.keys() | new_vars.keys()) if old_vars.get(k) != new_vars.get(k)
    ]
    return tuple(dict.fromkeys(names))


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


def scenario_changes(base: Scenario, head: Scenario, head_root: Path, head_file: str) -> list[DefinitionChange]:
    """The workload fields of :func:`scenario_effect` as records, with their line in the head's scenario TOML."""
    try:
        toml_text = (head_root / head_file).read_text()
    except OSError:
        toml_text = ""
    changes = []
    for key in _WORKLOAD_FIELDS:
        old, new = getattr(base, key), getattr(head, key)
        if old != new:
            text_old, text_new = _scenario_text(old), _scenario_text(new)
            changes.append(
                DefinitionChange(
                    head_file, key, text_old, text_new, _status(text_old, text_new), toml_line(toml_text, key)
                )
            )
    return changes


def _scenario_text(value: object) -> str:
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return _text(value)


def estimate_s(scenario: Scenario, sides: int) -> int:
    per_run = scenario.warmup_s + scenario.time_s + START_OVERHEAD_S
    return sides * scenario.repetitions * len(scenario.threads) * per_run
