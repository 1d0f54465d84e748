"""Stable identities: short content hashes, and the configuration identity of a server's variables."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping


def stable_hash(payload: object, length: int = 12) -> str:
    """Short SHA-256 of a JSON rendering with sorted keys: the same content gives the same hash."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]


#: Variables that differ between runs of the same configuration and must not enter the config hash.
_VOLATILE_VARIABLES = {
    "port",
    "report_port",
    "server_uid",
    "socket",
    "pid_file",
    "datadir",
    "log_error",
    "hostname",
    "server_uuid",
    "general_log_file",
    "slow_query_log_file",
    "log_bin_basename",
    "log_bin_index",
    "relay_log_basename",
    "relay_log_index",
    "relay_log",
    "tmpdir",
    "slave_load_tmpdir",  # follows TMPDIR (the config hash of two runs in two TMPDIRs differed by it)
    "replica_load_tmpdir",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "innodb_undo_directory",
    "gtid_executed",
    "gtid_purged",
    "timestamp",
    "warning_count",
    "error_count",
    "last_insert_id",
    "pseudo_thread_id",
    "rand_seed1",
    "rand_seed2",
    "large_page_size",
    "innodb_buffer_pool_load_at_startup",
    "secure_file_priv",
    "general_log",
    "bind_address",
    "open_files_limit",
}


def volatile(name: str, value: str, variables: Mapping[str, str]) -> bool:
    """Whether a server variable is per-instance (a path, a port, an id) rather than configuration.

    Besides the named volatile variables, any value holding the port, the datadir or one of dbperf's
    temporary folders is per-instance (MariaDB's aria_log_dir_path, MySQL's report_port, ...).
    """
    port = variables.get("port", "")
    datadir = variables.get("datadir", "").rstrip("/")
    return (
        name in _VOLATILE_VARIABLES
        or (bool(port) and value == port)
        or (bool(datadir) and datadir in value)
        or "/dbperf-" in value
    )


def config_hash(variables: Mapping[str, str]) -> str:
    """Hash of the effective server variables, without per-instance values (paths, ports, ids)."""
    return stable_hash({k: v for k, v in sorted(variables.items()) if not volatile(k, v, variables)})
