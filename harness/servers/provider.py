"""The provider protocol shared by local, container and external servers, and SQL helpers."""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pymysql

from harness.errors import ServerError
from harness.model import Server
from harness.model.endpoint import Endpoint
from harness.servers.callgrind import READY_TIMEOUT_S, Callgrind, Control

BENCH_USER = "dbperf"


@dataclass(frozen=True)
class DatasetCredentials:
    """The benchmark account stored with a prepared datadir (snapshot)."""

    user: str
    password: str = field(repr=False)

    @staticmethod
    def generate() -> DatasetCredentials:
        return DatasetCredentials(BENCH_USER, secrets.token_urlsafe(18))


@dataclass(frozen=True)
class Launch:
    """What one start of a server needs: its datadir (None for an external server), the account to
    connect as, the server variables, and callgrind when the run counts instructions."""

    datadir: Path | None
    credentials: DatasetCredentials
    variables: Mapping[str, str] = field(default_factory=dict)
    callgrind: Callgrind | None = None

    def needed_datadir(self, provider: str) -> Path:
        """The datadir, which the ``provider`` provider cannot start without."""
        if self.datadir is None:
            raise ServerError(f"the {provider} provider needs a datadir")
        return self.datadir

    def server_variables(self, flavour: str) -> Mapping[str, str]:
        """The variables to start with: callgrind's own added when the run is counted."""
        if self.callgrind is None:
            return self.variables
        return Callgrind.variables(flavour, self.variables)

    def ready(
        self, server: Server, port: int, program: str, *, alive: Callable[[], bool], log_tail: Callable[[], str]
    ) -> tuple[str, Endpoint]:
        """Wait until the server started on 127.0.0.1:``port`` answers and check its version pin; its
        version and the benchmark's endpoint."""
        user, password = self.credentials.user, self.credentials.password
        counted = self.callgrind is not None
        version = wait_until_ready(
            "127.0.0.1",
            port,
            user,
            password,
            alive=alive,
            log_tail=log_tail,
            what=f"{server.name} ({program}{' under callgrind' if counted else ''})",
            timeout_s=READY_TIMEOUT_S if counted else 90.0,
        )
        check_version_pin(server, version)
        return version, Endpoint("127.0.0.1", port, user, password, server.database)


class ServerInstance(Protocol):
    """A server that is up and answering."""

    @property
    def endpoint(self) -> Endpoint: ...

    @property
    def host_pid(self) -> int | None:
        """The server's process id as seen from this host (for /proc and perf), if known."""
        ...

    @property
    def version(self) -> str: ...

    def alive(self) -> bool: ...

    def error_log_tail(self) -> str: ...

    def save_log(self, destination: Path) -> bool:
        """Copy the server's log to ``destination`` (False when there is none to copy)."""
        ...

    @property
    def control(self) -> Control | None:
        """``callgrind_control`` for a server started under callgrind (None otherwise)."""
        ...


class Provider(Protocol):
    """How a server's instances are made, started and stopped."""

    server: Server

    def build_id(self) -> str:
        """Identity of the server build (binary version, image id) for the dataset snapshot key."""
        ...

    def initialize(self, datadir: Path, credentials: DatasetCredentials) -> None:
        """Create a fresh datadir holding the benchmark user and an empty ``sbtest`` database."""
        ...

    def serve(self, launch: Launch) -> AbstractContextManager[ServerInstance]:
        """Start a server on the launch's datadir (under callgrind when asked); leaving the context
        stops it and removes what it made."""
        ...

    def server_build(self) -> str:
        """The GNU build-id of the server binary ("" when it cannot be read): what cost counts depend on."""
        ...

    def counting_tool(self) -> str:
        """The valgrind version that counts instructions for this server (on the host or in its image)."""
        ...

    def credentials(self) -> DatasetCredentials:
        """The account a run connects with when there is no snapshot of ours (an external server's
        configured user); empty for local and container servers, whose snapshot carries its own."""
        ...


def bootstrap(provider: Provider, datadir: Path, credentials: DatasetCredentials) -> None:
    """Create the benchmark account and database in a fresh datadir, through a server started as root."""
    with provider.serve(Launch(datadir, DatasetCredentials("root", ""))) as instance:
        run_sql(instance.endpoint, bootstrap_sql(provider.server.flavour, credentials), as_root=True)


def connect(
    host: str,
    port: int,
    user: str,
    password: str,
    database: str | None = None,
    timeout: float = 5.0,
    read_timeout: float = 60,
) -> pymysql.connections.Connection:
    return pymysql.connect(
        host=host,
        port=port,
        user=user,
        password=password,
        database=database,
        connect_timeout=timeout,
        read_timeout=read_timeout,
        write_timeout=60,
        autocommit=True,
    )


def wait_until_ready(
    host: str,
    port: int,
    user: str,
    password: str,
    *,
    alive: Callable[[], bool],
    log_tail: Callable[[], str],
    timeout_s: float = 90.0,
    what: str = "server",
) -> str:
    """Poll until ``SELECT VERSION()`` answers; return the version. Fail fast if the process died."""
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        if not alive():
            raise ServerError(f"{what} exited during start-up; check its variables and config file. Log: {log_tail()}")
        try:
            conn = connect(host, port, user, password, timeout=2.0)
        except pymysql.err.MySQLError as exc:
            last = str(exc)
            time.sleep(0.2)
            continue
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT VERSION()")
                row = cur.fetchone()
                return str(row[0]) if row else ""
        finally:
            conn.close()
    raise ServerError(f"{what} did not answer on {host}:{port} within {timeout_s:.0f} s ({last}); log: {log_tail()}")


def gone(instance: ServerInstance, *, within_s: float = 30.0) -> bool:
    """Whether a server has died, asked after a run failed: its process has ended, or it stops answering and
    its process then ends. A server killed with SIGKILL closes its sockets before its process is reaped, and
    on a loaded machine the exit of a large process takes a while: until it has ended or the server answers
    again (``within_s`` at most; then it is taken for alive), the question stays open."""
    deadline = time.monotonic() + within_s
    while instance.alive():
        endpoint = instance.endpoint
        try:
            connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password, timeout=2.0).close()
        except pymysql.err.MySQLError:
            if time.monotonic() < deadline:
                time.sleep(0.2)
                continue
        return False
    return True


def bootstrap_sql(flavour: str, credentials: DatasetCredentials, database: str = "sbtest") -> list[str]:
    """SQL run as root on a fresh datadir: drop anonymous users, create the benchmark user and db."""
    user, pw = credentials.user, credentials.password.replace("'", "''")
    statements = []
    if flavour == "mariadb":
        statements.append("DELETE FROM mysql.global_priv WHERE User = ''")
        statements.append("FLUSH PRIVILEGES")
    statements += [
        f"CREATE DATABASE IF NOT EXISTS `{database}`",
        f"CREATE USER IF NOT EXISTS '{user}'@'%' IDENTIFIED BY '{pw}'",
        f"GRANT ALL PRIVILEGES ON *.* TO '{user}'@'%'",
        f"CREATE USER IF NOT EXISTS '{user}'@'localhost' IDENTIFIED BY '{pw}'",
        f"GRANT ALL PRIVILEGES ON *.* TO '{user}'@'localhost'",
        "FLUSH PRIVILEGES",
    ]
    return statements


def user_args(*, as_root: bool) -> list[str]:
    """``--user=root`` where the server runs as root (it refuses to otherwise); nothing for any other user,
    who runs the server as themselves (the switch is for root only)."""
    return ["--user=root"] if as_root else []


def init_args(flavour: str, datadir: Path, *, as_root: bool = True) -> list[str]:
    """Arguments that create a fresh datadir with a password-less root (mariadb-install-db / mysqld)."""
    if flavour == "mariadb":
        return [
            "--no-defaults",
            f"--datadir={datadir}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            *user_args(as_root=as_root),
        ]
    return ["--no-defaults", "--initialize-insecure", *user_args(as_root=as_root), f"--datadir={datadir}"]


def run_sql(endpoint: Endpoint, statements: list[str], *, as_root: bool = False) -> None:
    user, password = ("root", "") if as_root else (endpoint.user, endpoint.password)
    try:
        conn = connect(endpoint.host, endpoint.port, user, password)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot connect to {endpoint.host}:{endpoint.port} as {user}: {exc}") from exc
    statement = ""
    try:
        with conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement)
    except pymysql.err.MySQLError as exc:
        raise ServerError(
            f"{endpoint.host}:{endpoint.port} refused set-up SQL as {user} ({exc}) in '{statement[:80]}': "
            f"grant {user} ALL on the benchmark database `{endpoint.database}`"
        ) from exc
    finally:
        conn.close()


def read_variables(endpoint: Endpoint) -> dict[str, str]:
    """``SHOW GLOBAL VARIABLES`` as a dict (the effective configuration of the run)."""
    return dict(_query_pairs(endpoint, "SHOW GLOBAL VARIABLES"))


def read_status(endpoint: Endpoint) -> dict[str, int]:
    """Numeric ``SHOW GLOBAL STATUS`` counters."""
    out: dict[str, int] = {}
    for name, value in _query_pairs(endpoint, "SHOW GLOBAL STATUS"):
        if value.isdigit():
            out[name] = int(value)
    return out


@contextmanager
def held_status(endpoint: Endpoint) -> Iterator[Callable[[], dict[str, int]]]:
    """Numeric ``SHOW GLOBAL STATUS`` counters, read as often as asked over one connection held open.

    A cost run reads the counters right before its window: a new connection for each read made the
    server hand a cached thread (or a new one, when the last had not parked yet) to the reads and then
    to the window's connection, and which thread served the window moved its heap (docs/cost-noise.md).
    """
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot open the status connection to {endpoint.host}:{endpoint.port}: {exc}") from exc

    def read() -> dict[str, int]:
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW GLOBAL STATUS")
                rows = cur.fetchall()
        except pymysql.err.MySQLError as exc:
            raise ServerError(f"cannot read 'SHOW GLOBAL STATUS' from {endpoint.host}:{endpoint.port}: {exc}") from exc
        return {str(name).lower(): int(value) for name, value in rows if value is not None and str(value).isdigit()}

    try:
        yield read
    finally:
        with contextlib.suppress(pymysql.err.MySQLError):
            conn.close()


def _query_pairs(endpoint: Endpoint, sql: str) -> Iterator[tuple[str, str]]:
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                rows = cur.fetchall()
        finally:
            conn.close()
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot read '{sql}' from {endpoint.host}:{endpoint.port}: {exc}") from exc
    for name, value in rows:
        yield str(name).lower(), "" if value is None else str(value)


def check_version_pin(server: Server, version: str) -> None:
    """The server must be the version the server pins (a prefix match, e.g. '10.11')."""
    if not version.startswith(server.version):
        raise ServerError(
            f"server '{server.name}' pins version {server.version} but the server reports {version}; "
            "fix the server's 'version' or its image/binary"
        )
