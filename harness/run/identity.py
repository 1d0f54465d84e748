"""A run's configuration identity: the hash of the effective server variables, per-instance values left out."""

from __future__ import annotations

from harness.model import stable_hash

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


def config_hash(variables: dict[str, str]) -> str:
    """Hash of the effective server variables, without per-instance values (paths, ports, ids).

    Besides the named volatile variables, any value holding the port, the datadir or one of dbperf's
    temporary folders is per-instance (MariaDB's aria_log_dir_path, MySQL's report_port, ...).
    """
    port = variables.get("port", "")
    datadir = variables.get("datadir", "").rstrip("/")

    def volatile(name: str, value: str) -> bool:
        return (
            name in _VOLATILE_VARIABLES
            or (bool(port) and value == port)
            or (bool(datadir) and datadir in value)
            or "/dbperf-" in value
        )

    return stable_hash({k: v for k, v in sorted(variables.items()) if not volatile(k, v)})
