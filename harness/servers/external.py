"""External provider: an existing server (TiDB, a cloud MySQL, a staging box). No lifecycle.

The password comes from the environment variable the server names in ``password_env`` and is never
written to the store or printed. dbperf only ever touches the server's benchmark database
(``sbtest`` unless the server says otherwise): it drops and re-creates the sysbench tables in it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pymysql

from harness.errors import ServerError
from harness.model import Server
from harness.model.endpoint import Endpoint
from harness.servers.callgrind import Control
from harness.servers.provider import DatasetCredentials, Launch, check_version_pin, connect


@dataclass(frozen=True)
class ExternalInstance:
    endpoint: Endpoint
    version: str

    @property
    def host_pid(self) -> int | None:
        return None

    def alive(self) -> bool:
        try:
            connect(self.endpoint.host, self.endpoint.port, self.endpoint.user, self.endpoint.password).close()
        except pymysql.err.MySQLError:
            return False
        return True

    def error_log_tail(self) -> str:
        return "(external server: no log access)"

    def save_log(self, destination: Path) -> bool:
        del destination
        return False

    @property
    def control(self) -> Control | None:
        return None


#: Client errors that mean the server answered and refused the account (wrong password, no such user,
#: no access to the database, an authentication plugin the client cannot use).
_LOGIN_REFUSED = frozenset({1044, 1045, 1698, 1251, 2059, 2061})


def _said(exc: pymysql.err.MySQLError) -> str:
    if len(exc.args) >= 2:
        return f"error {exc.args[0]}: {exc.args[1]}"
    return str(exc)


_NO_COST = (
    "server '{name}' is external: cost mode counts instructions of a server dbperf starts under valgrind "
    "(local or container); judge this one with timing runs (--no-cost)"
)


class ExternalProvider:
    """Connects to a server someone else runs."""

    def __init__(self, server: Server) -> None:
        self.server = server

    def credentials(self) -> DatasetCredentials:
        env = self.server.password_env
        password = os.environ.get(env, "") if env else ""
        if env and env not in os.environ:
            raise ServerError(
                f"server '{self.server.name}' reads its password from ${env}, which is not set; export it"
            )
        return DatasetCredentials(self.server.user or "root", password)

    def _connect_error(self, port: int, user: str, exc: pymysql.err.MySQLError) -> ServerError:
        """Reached and refused (a login or a limit) is not the same as not reached at all."""
        where = f"external server '{self.server.name}' at {self.server.host}:{port}"
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
        source = f" ({self.server.source})" if self.server.source else ""
        if code in _LOGIN_REFUSED:
            env = f"${self.server.password_env}" if self.server.password_env else "the server file"
            return ServerError(
                f"{where} was reached but refused the login of '{user}' ({_said(exc)}): check the user in the "
                f"server file{source} and the password in {env}"
            )
        if code == 1040:
            return ServerError(
                f"{where} was reached but has no free connection (error 1040, {_said(exc)}): raise its "
                "max_connections or wait for its other clients"
            )
        return ServerError(
            f"cannot reach {where} ({_said(exc)}): check that it is running and that host and port in the "
            f"server file{source} are right"
        )

    def build_id(self) -> str:
        creds = self.credentials()
        with self.serve(Launch(None, creds)) as instance:
            return f"external:{self.server.host}:{self.server.port}:{instance.version}"

    def server_build(self) -> str:
        return ""

    def counting_tool(self) -> str:
        raise ServerError(_NO_COST.format(name=self.server.name))

    def initialize(self, datadir: Path, credentials: DatasetCredentials) -> None:
        """Nothing to initialise: the database must exist and the account must be allowed to use it."""

    @contextmanager
    def serve(self, launch: Launch) -> Iterator[ExternalInstance]:
        # the datadir and variables are unused: an external server's configuration is its owner's business
        credentials = launch.credentials
        if launch.callgrind is not None:
            raise ServerError(_NO_COST.format(name=self.server.name))
        port = self.server.port or 3306
        try:
            conn = connect(self.server.host, port, credentials.user, credentials.password)
        except pymysql.err.MySQLError as exc:
            raise self._connect_error(port, credentials.user, exc) from exc
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT VERSION()")
                row = cur.fetchone()
                cur.execute(f"CREATE DATABASE IF NOT EXISTS `{self.server.database}`")
        except pymysql.err.MySQLError as exc:
            raise ServerError(
                f"external server '{self.server.name}' refused to create or use database "
                f"'{self.server.database}' for {credentials.user} ({_said(exc)}): create the database and grant "
                f"the user ALL on `{self.server.database}`.*"
            ) from exc
        finally:
            conn.close()
        version = str(row[0]) if row else ""
        check_version_pin(self.server, version)
        endpoint = Endpoint(self.server.host, port, credentials.user, credentials.password, self.server.database)
        yield ExternalInstance(endpoint, version)
