"""A setting a pull request adds says what the base ran with where dbperf pinned it (issue 34, item 4):
``innodb_flush_log_at_trx_commit = 1`` added reads as before 2 (dbperf's pin), not as new from nothing."""

from __future__ import annotations

from pathlib import Path

from harness.ci.effects import server_changes
from harness.model import Server
from harness.report.pr_sections import change_line


def _server(root: Path, cnf: str, **variables: str) -> Server:
    path = root / "servers" / "conf" / "mariadb.cnf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cnf)
    return Server(
        name="mariadb-local", flavour="mariadb", version="10.11", provider="local", binary="mariadbd",
        config_file=path, variables=variables,
    )  # fmt: skip


def test_an_added_pinned_setting_gives_the_value_the_base_ran_with(tmp_path: Path) -> None:
    base = _server(tmp_path / "base", "[mysqld]\ninnodb_buffer_pool_size = 512M\n")
    head = _server(
        tmp_path / "head",
        "[mysqld]\ninnodb_buffer_pool_size = 512M\ninnodb-flush-log-at-trx-commit = 1\nmax_allowed_packet = 64M\n",
    )
    changes = {c.name: c for c in server_changes(base, head, tmp_path / "base", tmp_path / "head", "x.toml")}
    flush, packet = changes["innodb_flush_log_at_trx_commit"], changes["max_allowed_packet"]
    assert (flush.status, flush.old, flush.new) == ("added", "2", "1")  # the dashed spelling resolves too
    assert (packet.status, packet.old) == ("added", "")  # not pinned: the server's own default, unknown here
    assert change_line(flush).startswith(
        "`innodb_flush_log_at_trx_commit` = `1` added (before: `2`, dbperf's pin) (`servers/conf/mariadb.cnf` line 3"
    ), change_line(flush)
    assert "before" not in change_line(packet)


def test_a_setting_the_base_set_itself_is_not_called_a_pin(tmp_path: Path) -> None:
    base = _server(tmp_path / "base", "[mysqld]\n", innodb_flush_log_at_trx_commit="0")
    head = _server(tmp_path / "head", "[mysqld]\n", innodb_flush_log_at_trx_commit="0", sync_binlog="1")
    (change,) = server_changes(base, head, tmp_path / "base", tmp_path / "head", "x.toml")
    assert (change.name, change.old, change.new) == ("sync_binlog", "0", "1")  # dbperf pins sync_binlog = 0
