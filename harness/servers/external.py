"""External provider: an existing server (TiDB, a cloud MySQL, a staging box). No lifecycle.

The password comes from the environment variable the target names in ``password_env`` and is never
written to the store or printed. dbperf only ever touches the target's benchmark database
(``sbtest`` unless the target says otherwise): it drops and re-creates the sysbench tables in it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pymysql

from harness.errors import ServerError
from harness.model import ServerTarget
from harness.servers.base import DatasetCredentials, Endpoint, check_version_pin, connect


@dataclass(frozen=True)
class ExternalServer:
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


class ExternalProvider:
    """Connects to a server someone else runs."""

    def __init__(self, target: ServerTarget) -> None:
        self.target = target

    def credentials(self) -> DatasetCredentials:
        env = self.target.password_env
        password = os.environ.get(env, "") if env else ""
        if env and env not in os.environ:
            raise ServerError(
                f"target '{self.target.name}' reads its password from ${env}, which is not set; export it"
            )
        return DatasetCredentials(self.target.user or "root", password)

    def build_id(self) -> str:
        creds = self.credentials()
        with self.serve(None, creds, {}) as server:
            return f"external:{self.target.host}:{self.target.port}:{server.version}"

    def initialize(self, datadir: Path, credentials: DatasetCredentials) -> None:
        """Nothing to initialise: the database must exist and the account must be allowed to use it."""

    @contextmanager
    def serve(
        self, datadir: Path | None, credentials: DatasetCredentials, variables: Mapping[str, str]
    ) -> Iterator[ExternalServer]:
        del datadir, variables  # an external server's configuration is its owner's business
        port = self.target.port or 3306
        try:
            conn = connect(self.target.host, port, credentials.user, credentials.password)
        except pymysql.err.MySQLError as exc:
            raise ServerError(
                f"cannot reach external target '{self.target.name}' at {self.target.host}:{port}: {exc}"
            ) from exc
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT VERSION()")
                row = cur.fetchone()
                cur.execute(f"CREATE DATABASE IF NOT EXISTS `{self.target.database}`")
        finally:
            conn.close()
        version = str(row[0]) if row else ""
        check_version_pin(self.target, version)
        endpoint = Endpoint(self.target.host, port, credentials.user, credentials.password, self.target.database)
        yield ExternalServer(endpoint, version)
