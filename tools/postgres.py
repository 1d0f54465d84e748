#!/usr/bin/env python3
"""A throwaway PostgreSQL (Debian's postgresql-15) for the shared-store tests, or to try a lake locally.

    python3 tools/postgres.py start DIR [--port P] [--db NAME ...] [--password-file F]
        initdb on first use, start, wait until ready, create the databases; prints
        "port=P" and "dsn=..." lines. Reuses a server already running in DIR.
    python3 tools/postgres.py createdb DIR NAME | stop DIR | status DIR | destroy DIR

The cluster runs as the ``postgres`` OS user (initdb refuses root), so DIR and every folder above it
must be reachable by that user: use a folder under /tmp with mode 0755, not pytest's 0700 tmp_path.
It listens on 127.0.0.1 only, with its unix socket inside DIR (keep DIR short: a socket path must fit
in 107 bytes). Local socket connections are trusted; TCP connections need the superuser's password
when ``--password-file`` is given (scram-sha-256; clients pass it as PGPASSWORD), else are trusted.

This is for tests and trials. A team's runners point at the team's own PostgreSQL: see docs/fleet.md.
"""

from __future__ import annotations

import argparse
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path


def _pg_bin() -> Path:
    """``PG_BIN``, else the newest Debian PostgreSQL (/usr/lib/postgresql/<major>/bin)."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _pg_bin()
USER = "postgres"


class PgError(RuntimeError):
    """A PostgreSQL tool failed."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    """One PostgreSQL cluster in ``root`` (data in ``root/data``, socket and log in ``root``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self.data = self.root / "data"
        self.log = self.root / "server.log"

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        if not (PG_BIN / tool).is_file():
            raise PgError(f"{PG_BIN / tool} is missing: apt-get install postgresql (tools/setup.sh does)")
        argv = [str(PG_BIN / tool), *args]
        if os.geteuid() == 0:
            argv = ["runuser", "-u", USER, "--", *argv]
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, cwd="/")
        if check and proc.returncode != 0:
            raise PgError(f"{tool} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()}")
        return proc

    def running_port(self) -> int | None:
        """The port of the server running in this folder (line 4 of postmaster.pid), else None."""
        if not (self.data / "PG_VERSION").exists():
            return None
        if self._run("pg_ctl", "-D", str(self.data), "status", check=False).returncode != 0:
            return None
        lines = (self.data / "postmaster.pid").read_text().splitlines()
        return int(lines[3]) if len(lines) > 3 else None

    def init(self, password_file: Path | None) -> None:
        if (self.data / "PG_VERSION").exists():
            return
        self.root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            entry = pwd.getpwnam(USER)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        shutil.rmtree(self.data, ignore_errors=True)  # a half-finished initdb
        auth = ["-A", "trust"]
        if password_file is not None:
            copy = self.root / "superuser-password"  # readable by the postgres user only
            copy.write_text(password_file.read_text().strip() + "\n")
            copy.chmod(0o600)
            if os.geteuid() == 0:
                os.chown(copy, pwd.getpwnam(USER).pw_uid, pwd.getpwnam(USER).pw_gid)
            auth = ["--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={copy}"]
        self._run("initdb", "-D", str(self.data), "-U", USER, "-E", "UTF8", "--no-locale", *auth)

    def start(self, port: int | None = None, *, password_file: Path | None = None, timeout_s: float = 60.0) -> int:
        """Start (after initdb if needed) and wait until it answers; returns the port."""
        self.init(password_file)
        current = self.running_port()
        if current is not None:
            return current
        for attempt in range(5):
            chosen = port or _free_port()
            options = (
                f"-p {chosen} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200 "
                "-c shared_buffers=64MB"
            )
            proc = self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", str(int(timeout_s)),
                "-o", options, "start", check=False,
            )  # fmt: skip
            if proc.returncode == 0:
                self._wait_ready(chosen, timeout_s)
                return chosen
            if port is not None or attempt == 4:
                tail = self.log.read_text()[-2000:] if self.log.exists() else ""
                raise PgError(f"pg_ctl start failed: {proc.stderr.strip()}\n{tail}")
            time.sleep(0.3)  # the port was taken between choosing and binding it: try another
        raise AssertionError("unreachable")

    def _wait_ready(self, port: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._run("pg_isready", "-h", str(self.root), "-p", str(port), check=False).returncode == 0:
                return
            time.sleep(0.1)
        raise PgError(f"PostgreSQL on port {port} not ready after {timeout_s:g} s (log: {self.log})")

    def createdb(self, name: str) -> None:
        port = self.running_port()
        if port is None:
            raise PgError(f"no PostgreSQL running in {self.data}: start it first")
        proc = self._run("createdb", "-h", str(self.root), "-p", str(port), "-U", USER, name, check=False)
        if proc.returncode != 0 and "already exists" not in proc.stderr:
            raise PgError(proc.stderr.strip())

    def dsn(self, dbname: str) -> str:
        return f"dbname={dbname} host=127.0.0.1 port={self.running_port()} user={USER}"

    def stop(self, mode: str = "fast") -> None:
        if self.running_port() is not None:
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("start", "createdb", "stop", "status", "destroy"))
    parser.add_argument("dir", type=Path)
    parser.add_argument("name", nargs="?", help="database name (createdb)")
    parser.add_argument("--port", type=int)
    parser.add_argument("--db", action="append", default=[], help="create this database (repeatable)")
    parser.add_argument("--password-file", type=Path, help="superuser password for TCP connections (scram)")
    args = parser.parse_args(argv)
    cluster = Cluster(args.dir)
    try:
        if args.action == "start":
            port = cluster.start(args.port, password_file=args.password_file)
            for name in args.db:
                cluster.createdb(name)
            print(f"port={port}")
            print(f"dsn={cluster.dsn(args.db[0] if args.db else 'postgres')}")
        elif args.action == "createdb":
            if not args.name:
                parser.error("createdb needs a database name")
            cluster.createdb(args.name)
        elif args.action == "stop":
            cluster.stop()
        elif args.action == "destroy":
            cluster.destroy()
        else:
            port = cluster.running_port()
            print(f"running port={port}" if port else "stopped")
            return 0 if port else 3
    except PgError as exc:
        print(f"postgres.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
