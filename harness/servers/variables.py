"""Server variables: pinned defaults, values derived from the scenario, and the generated my.cnf.

Defaults that differ between MySQL and MariaDB versions are pinned so a version upgrade compares
like with like (character set and collation, flush policy, buffer pool, binary log, performance
schema). ``max_connections`` and ``max_prepared_stmt_count`` are derived from the scenario's largest
thread count, so sysbench's errors 1040 and 1461 cannot happen at any listed thread count.

Precedence, last wins: pinned defaults < server config file < server ``[variables]``. The derived
minimums fill in what the user left unset; a user's own value below one of them (or not a number)
is refused before anything runs, never overridden silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from harness.config.option_names import server_setting_names, setting_name
from harness.errors import ConfigError
from harness.model import Scenario, Server
from harness.sysbench.statements import required_prepared_statements

#: Pinned for every flavour and version (see module docstring).
PINNED: dict[str, str] = {
    "character_set_server": "utf8mb4",
    "collation_server": "utf8mb4_general_ci",
    "innodb_buffer_pool_size": "512M",
    "innodb_flush_log_at_trx_commit": "2",
    "sync_binlog": "0",
    "performance_schema": "OFF",
    "thread_cache_size": "64",
}

#: Flavour-specific pins: MySQL 8+ writes a binary log by default, MariaDB does not.
PINNED_BY_FLAVOUR: dict[str, dict[str, str]] = {
    "mysql": {"skip_log_bin": "ON", "mysqlx": "OFF", "innodb_numa_interleave": "OFF"},
    # 11.8 turned snapshot isolation on (write conflicts, error 1020, under oltp_read_write);
    # "loose-" lets builds without the variable start
    "mariadb": {"loose-innodb_snapshot_isolation": "OFF"},
}

#: Flags rendered without "= value" (boolean options that take none in option files).
_FLAGS = {"skip_log_bin", "skip_ssl"}


def derived_minimums(scenario: Scenario | None, extra_threads: int = 0) -> dict[str, int]:
    """Variables the scenario needs at its largest thread count (with headroom for probes)."""
    threads = max(scenario.threads) if scenario else 16
    threads = max(threads, extra_threads)
    connections = threads + 64
    statements = 16382
    if scenario is not None:
        statements = max(
            statements,
            int(required_prepared_statements(scenario.script, scenario.tables, threads) * 1.25) + 1024,
        )
    return {
        "max_connections": connections,
        "max_prepared_stmt_count": min(statements, 4_194_304),
        "open_files_limit": max(65535, connections * 4),
        "back_log": min(max(connections, 80), 65535),
    }


#: Derived minimums below which sysbench fails, with what they count and the error that follows.
_GUARDED: dict[str, tuple[str, int]] = {
    "max_connections": ("connections", 1040),
    "max_prepared_stmt_count": ("prepared statements", 1461),
}
_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)
_OPTION_GROUPS = {"mysqld", "mariadb", "mariadbd", "server", "mysqld_safe"}


def size_bytes(text: str) -> int | None:
    """A server option's number with an optional K/M/G/T suffix (``256M``), or None if it is not one."""
    match = _SIZE.match(text)
    if not match:
        return None
    power = " KMGT".index((match.group(2) or " ").upper())
    return int(match.group(1)) * (1 << (10 * power))


def requested_values(server: Server) -> dict[str, str]:
    """What the user asked for: the server's config file (server option groups), then its variables,
    keyed by the option each name sets."""
    options = server_setting_names(server.flavour, server.version)
    values: dict[str, str] = {}
    if server.config_file is not None and server.config_file.is_file():
        group = ""
        for raw in server.config_file.read_text(errors="replace").splitlines():
            line = raw.split("#", 1)[0].strip()
            if line.startswith("[") and line.endswith("]"):
                group = line[1:-1].strip().lower().split("-", 1)[0]
            elif line and group in _OPTION_GROUPS:
                name, _, value = line.partition("=")
                values[setting_name(name, options)] = value.strip().strip("'\"")
    values.update({setting_name(k, options): v for k, v in server.variables.items()})
    return values


def check_requested(server: Server, scenario: Scenario, requested: Mapping[str, str] | None = None) -> None:
    """Refuse a user setting that cannot work with this scenario, instead of overriding it silently."""
    requested = requested_values(server) if requested is None else requested
    threads = max(scenario.threads)
    where = f"server '{server.name}'" + (f" ({server.config_file.name})" if server.config_file else "")
    for name, minimum in derived_minimums(scenario).items():
        if name not in requested:
            continue
        value = size_bytes(requested[name])
        if value is None:
            raise ConfigError(
                f"{where} sets {name}={requested[name]!r}, which is not a number: give a whole number"
                + (f" (at least {minimum} for this scenario)" if name in _GUARDED else "")
            )
        if name in _GUARDED and value < minimum:
            what, code = _GUARDED[name]
            raise ConfigError(
                f"{where} sets {name}={requested[name]}, below the {minimum} {what} {scenario.name} needs at "
                f"{threads} thread{'s' if threads != 1 else ''} (error {code} would follow): "
                "raise it or lower --threads"
            )


def effective_variables(
    server: Server, scenario: Scenario | None, requested: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables dbperf sets (besides the server's config file), last one wins.

    A derived minimum fills in only what the user left unset: an explicit setting (server variables,
    ``--head-var`` or the config file) stands, and one that would make the run fail is refused
    (:func:`check_requested`). ``requested``: the server's :func:`requested_values`, when already read.
    """
    values: dict[str, str] = {**PINNED, **PINNED_BY_FLAVOUR.get(server.flavour, {})}
    values.update(server.variables)
    requested = requested_values(server) if requested is None else requested
    if scenario is not None:
        check_requested(server, scenario, requested)
    for name, minimum in derived_minimums(scenario).items():
        if name not in requested:
            values[name] = str(minimum)
    return values


def render_cnf(server: Server, variables: Mapping[str, str], *, tmpdir: Path | None = None) -> str:
    """The my.cnf dbperf gives the server: pinned defaults, the server's file, then its variables.

    ``tmpdir``: the server's own, first (a tmpdir in the server's file or variables comes later and wins).
    """
    pinned = {**PINNED, **PINNED_BY_FLAVOUR.get(server.flavour, {})}
    lines = ["# generated by dbperf; do not edit", "[mysqld]"]
    if tmpdir is not None:
        lines.append(f"tmpdir = {tmpdir}")
    lines += [_line(k, v) for k, v in pinned.items() if k not in server.variables]
    if server.config_file is not None:
        lines += ["", f"# --- {server.config_file.name} ---", server.config_file.read_text().rstrip(), ""]
    lines.append("[mysqld]")
    lines += [_line(k, v) for k, v in variables.items() if k not in pinned or k in server.variables]
    return "\n".join(lines) + "\n"


def _line(name: str, value: str) -> str:
    if name in _FLAGS and value.upper() in {"ON", "1", "TRUE"}:
        return name.replace("_", "-")
    if name in _FLAGS:
        return f"# {name} = {value} (flag left unset)"
    return f"{name} = {value}"


def write_cnf(path: Path, server: Server, variables: Mapping[str, str], *, tmpdir: Path | None = None) -> Path:
    path.write_text(render_cnf(server, variables, tmpdir=tmpdir))
    return path


def _same_value(asked: str, runs: str) -> bool:
    """Whether a requested option value and the value the server reports are the same setting.

    Sizes compare as bytes (``512M`` = ``536870912``), numbers as numbers (``1`` = ``1.000000``), switches
    as on/off (``ON`` = ``1``), sets by their items (every requested ``a=b`` or ``X`` is among the server's);
    anything else as text, ignoring case.
    """
    a, r = asked.strip().strip("'\"").lower(), runs.strip().lower()
    if a == r:
        return True
    sizes = size_bytes(a), size_bytes(r)
    if sizes[0] is not None and sizes[1] is not None:
        return sizes[0] == sizes[1]
    try:
        return float(a) == float(r)
    except ValueError:
        pass
    switch = {"on": "1", "true": "1", "yes": "1", "off": "0", "false": "0", "no": "0"}
    if switch.get(a, a) == switch.get(r, r):
        return True
    if "," in r or "=" in r:
        have = {item.strip() for item in r.split(",")}
        return all(item.strip() in have for item in a.split(","))
    return False


def unmet_settings(requested: Mapping[str, str], effective: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Settings the server does not run with as asked (it clamped, rounded or ignored them): name ->
    (requested, effective). Options the server does not report as a variable are left out."""
    return {
        name: (value, effective[name])
        for name, value in requested.items()
        if name in effective and not _same_value(value, effective[name])
    }
