"""Server option names on real servers (issue 35, item 1).

A prefix of an unsafe option on a real MariaDB: MariaDB reads ``init_fil`` as ``init_file`` and runs the
file, so dbperf refuses it before any server starts; the control, the same file trusted
(``allow_unsafe_variables = true``), shows the server would have run it. And the committed option lists
(harness/config/server_options/) are what the real binaries say, so they cannot drift unnoticed
(regenerate with tools/server_options.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support import REPO
from support.cli import one_line_error

from harness.config.option_names import committed_lists, parse_help, read_list

pytestmark = pytest.mark.integration

RUN = ("run", "--scenario", "oltp_point_select", "--threads", "1", "--time", "1", "--warmup", "0")


def _servers(tmp_path: Path, sql: Path, *, trusted: bool) -> Path:
    servers = tmp_path / "servers"
    if not servers.exists():
        shutil.copytree(REPO / "servers", servers)
    local = (servers / "mariadb-local.toml").read_text().replace('"mariadb-local"', '"prefixed"')
    extra = "allow_unsafe_variables = true\n" if trusted else ""
    (servers / "prefixed.toml").write_text(f'{local}\n{extra}\n[variables]\ninit_fil = "{sql}"\n')
    return servers


def test_a_prefix_of_init_file_is_refused_and_its_sql_never_runs(dbperf, tmp_path: Path) -> None:
    marker = tmp_path / "marker.txt"
    sql = tmp_path / "x.sql"
    sql.write_text(f"SELECT 'the init file ran' INTO OUTFILE '{marker}';\n")
    store = tmp_path / "store" / "dbperf.duckdb"

    servers = _servers(tmp_path, sql, trusted=False)
    out = dbperf.run(*RUN, "--no-cost", "--server", "prefixed", "--servers-dir", servers, "--store", store)
    line = one_line_error(out.stderr)
    assert out.returncode == 2, out.stderr
    assert "server variable 'init_fil' (read as init_file) runs the SQL in a file at start" in line, line
    assert not marker.exists() and not store.exists()  # refused before a server or the store was touched

    servers = _servers(tmp_path, sql, trusted=True)
    out = dbperf.run(*RUN, "--no-cost", "--server", "prefixed", "--servers-dir", servers, "--store", store)
    assert out.returncode == 0, out.stderr
    assert marker.read_text().strip() == "the init file ran"  # MariaDB read init_fil as init_file


def _help(argv: list[str]) -> frozenset[str]:
    done = subprocess.run(
        [*argv, "--no-defaults", "--verbose", "--help"], capture_output=True, text=True, timeout=120, check=True
    )
    return parse_help(done.stdout)


def _drift(committed: frozenset[str], real: frozenset[str]) -> str:
    return f"missing {sorted(real - committed)[:10]}, extra {sorted(committed - real)[:10]}"


def test_the_committed_mariadb_list_is_the_installed_mariadbd():
    version = subprocess.run(["mariadbd", "--version"], capture_output=True, text=True, check=True).stdout
    assert " Ver 10.11." in version, version  # the machine's MariaDB (Debian 12) is the list's version
    committed, real = read_list(committed_lists()[("mariadb", "10.11")]), _help(["mariadbd"])
    assert committed == real, _drift(committed, real) + ": run `python tools/server_options.py mariadb 10.11`"


@pytest.mark.docker
@pytest.mark.parametrize(
    ("flavour", "version", "image", "binary"),
    [("mysql", "9.7", "dbperf/mysql:9.7", "mysqld"), ("mariadb", "11.8", "dbperf/mariadb:11.8", "mariadbd")],
)
def test_the_committed_lists_are_the_images_binaries(flavour: str, version: str, image: str, binary: str):
    committed = read_list(committed_lists()[(flavour, version)])
    real = _help(["docker", "run", "--rm", "--network", "none", image, binary])
    assert committed == real, (
        _drift(committed, real) + f": run `python tools/server_options.py {flavour} {version} --image {image}`"
    )
