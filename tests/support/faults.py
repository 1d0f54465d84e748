"""The fault matrix's cases (tests/faults): a case's private world, its closing line, its row in the matrix.

Every case runs ``dbperf`` as a user would, with its own TMPDIR, store and XDG_DATA_HOME; each adds a
row to ``artifacts/fault-matrix.md``, written when the session ends (:func:`write_matrix`).
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pymysql
import pytest

from support import REPO
from support.integration import PROGRESS_AT, containers_of, processes_mentioning, stop_process

#: The quickest real run: quick profile, one thread, one repetition, one measured second.
QUICK = ("--scenario", "oltp_point_select", "--threads", "1", "--time", "1", "--warmup", "0", "--repetitions", "1")
MATRIX: list[dict[str, str]] = []


def quick(*extra: str, time_s: int = 1) -> list[str]:
    args = list(QUICK)
    args[args.index("--time") + 1] = str(time_s)
    return ["run", *args, "--no-cost", *extra]


def closing_line(stderr: str) -> str:
    """The last line on stderr: dbperf's one-line verdict on what happened (no traceback anywhere)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines, "nothing on stderr"
    last = lines[-1]
    assert last.startswith("dbperf: "), f"last stderr line is not dbperf's verdict: {last!r}\n{stderr}"
    return last


@dataclass
class Fault:
    """One case's private world: TMPDIR, store (holding one earlier run), data home, environment."""

    dbperf: Any
    root: Path
    tmpdir: Path
    store: Path
    data_home: Path
    earlier: str
    extra_env: dict[str, str] = field(default_factory=dict)
    started: list[Any] = field(default_factory=list)  # Streamed: the dbperf processes this case started

    @property
    def env(self) -> dict[str, str]:
        return {"TMPDIR": str(self.tmpdir), "XDG_DATA_HOME": str(self.data_home), **self.extra_env}

    def run(self, *args: str | Path, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
        args = (*args, "--store", self.store) if _takes_store(args) else args
        return self.dbperf.run(*args, env=self.env, timeout_s=timeout_s)

    def start(self, *args: str | Path):
        args = (*args, "--store", self.store) if _takes_store(args) else args
        streamed = self.dbperf.start(*args, env=self.env)
        self.started.append(streamed)
        return streamed

    def runs(self) -> list[dict[str, Any]]:
        """The stored runs (read in this process: a dbperf subprocess costs seconds on a loaded machine)."""
        from harness.store import Store

        return [
            {**r.summary_dict(), "group_id": r.group_id, "label": r.label, "testbed": r.testbed}
            for r in Store(self.store).runs()
        ]

    def leaks(self, cache_dir: Path | None = None) -> list[str]:
        """Everything this case's dbperf processes left: temporary folders, processes, containers, snapshots."""
        found = [f"temp folder {p.name}" for p in self.tmpdir.iterdir()]
        found += [f"process {p}" for p in processes_mentioning(str(self.tmpdir))]
        for streamed in self.started:
            found += [f"container {c}" for c in containers_of(streamed.proc.pid)]
        if cache_dir is not None:
            found += [f"unfinished snapshot {p.name}" for p in (cache_dir / "snapshots").glob("tmp-*")]
        return found

    def earlier_readable(self) -> bool:
        return self.earlier in {r["run_id"] for r in self.runs()}


def _takes_store(args: tuple[str | Path, ...]) -> bool:
    return (bool(args) and args[0] in {"run", "compare", "gate", "runs", "report"}) or args[:2] == ("import", "unsaved")


def record(case: str, code: int | None, message: str, stored: str, leaked: list[str] | str) -> None:
    """One row of the fault matrix (written to artifacts/fault-matrix.md at the end of the session)."""
    leaked_text = leaked if isinstance(leaked, str) else ("nothing" if not leaked else "; ".join(leaked))
    MATRIX.append(
        {
            "case": case,
            "exit": "-" if code is None else str(code),
            "message": message.replace("|", "\\|"),
            "stored": stored,
            "leaked": leaked_text,
        }
    )


def _write_rows(rows: list[dict[str, str]]) -> None:
    out = REPO / "artifacts" / "fault-matrix.md"
    out.parent.mkdir(exist_ok=True)
    lines = ["| case | exit | message (last stderr line) | stored | leaked |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['exit']} | {r['message']} | {r['stored']} | {r['leaked']} |" for r in rows]
    out.write_text("\n".join(lines) + "\n")


def wait_for_progress(streamed, at_least_s: int = 1, timeout_s: float = 300) -> None:
    streamed.wait_for_stderr(
        lambda line: (m := PROGRESS_AT.match(line)) is not None and int(m.group(1)) >= at_least_s,
        timeout_s=timeout_s,
    )


@dataclass(frozen=True)
class ExternalServer:
    port: int
    user: str
    password: str
    servers_dir: Path
    password_env: str = "DBPERF_TEST_EXTERNAL_PASSWORD"

    def root_sql(self, *statements: str) -> None:
        conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="", autocommit=True)
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
        finally:
            conn.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_file(name: str, port: int, user: str, env: str) -> str:
    return (
        f'name = "{name}"\ndescription = "a MariaDB started by the test, standing in for an external server"\n'
        f'flavour = "mariadb"\nversion = "10.11"\nprovider = "external"\nhost = "127.0.0.1"\nport = {port}\n'
        f'user = "{user}"\npassword_env = "{env}"\ndatabase = "sbtest"\n'
    )


def write_matrix(session: pytest.Session) -> None:
    """Write the fault matrix; under xdist each worker keeps its rows beside the others' and the table
    is rebuilt from all of them (under a lock) by every worker that finishes, so the last one leaves it whole."""
    if not MATRIX:
        return
    worker = getattr(session.config, "workerinput", None)
    rows = list(MATRIX)
    if worker is not None:
        import fcntl

        # the run's own base folder (xdist's workers each have popen-gwN inside it): removed with the run's
        # temporary files (tools/test.sh) or rotated by pytest, never left behind in /tmp
        shared = session.config._tmp_path_factory.getbasetemp().parent / "fault-matrix"
        shared.mkdir(exist_ok=True)
        (shared / f"{worker['workerid']}.json").write_text(json.dumps(MATRIX))
        with (shared / "lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            rows = [row for part in sorted(shared.glob("*.json")) for row in json.loads(part.read_text())]
            _write_rows(rows)
        return
    _write_rows(rows)


@contextlib.contextmanager
def external_mariadb(folder: Path) -> Iterator[ExternalServer]:
    """A MariaDB dbperf did not start: own datadir, a free port, a user with a password and no SUPER."""
    datadir = folder / "data"
    tmpdir = folder / "tmp"  # its own: a starting server deletes every #sql* file in its tmpdir
    tmpdir.mkdir()
    subprocess.run(
        [
            "mariadb-install-db",
            "--no-defaults",
            f"--datadir={datadir}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--user=root",
            f"--tmpdir={tmpdir}",
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    port = _free_port()
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(
        [
            "mariadbd",
            "--no-defaults",
            f"--datadir={datadir}",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--socket={folder / 'sock'}",
            f"--tmpdir={tmpdir}",
            "--user=root",
            "--innodb-buffer-pool-size=64M",
            "--innodb-log-file-size=16M",
            "--max-connections=100",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    password = "ext pass,with #odd 'chars"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                pymysql.connect(host="127.0.0.1", port=port, user="root", password="").close()
                break
            except pymysql.err.MySQLError:
                assert server.poll() is None, (folder / "server.log").read_text()
                assert time.monotonic() < deadline, "the stand-in external server did not start"
                time.sleep(0.3)
        servers_dir = folder / "servers"
        servers_dir.mkdir()
        ext = ExternalServer(port, "bench", password, servers_dir)
        ext.root_sql(
            "CREATE DATABASE sbtest",
            "CREATE USER 'bench'@'%' IDENTIFIED BY 'ext pass,with #odd ''chars'",
            "CREATE USER 'bench'@'localhost' IDENTIFIED BY 'ext pass,with #odd ''chars'",
            "GRANT ALL ON sbtest.* TO 'bench'@'%'",
            "GRANT ALL ON sbtest.* TO 'bench'@'localhost'",
        )
        (servers_dir / "ext-mariadb.toml").write_text(_server_file("ext-mariadb", port, "bench", ext.password_env))
        (servers_dir / "ext-closed.toml").write_text(
            _server_file("ext-closed", _free_port(), "bench", ext.password_env)
        )
        yield ext
    finally:
        stop_process(server)
        log.close()


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True, timeout=30)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False, timeout=30)
