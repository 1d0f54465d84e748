"""Where a client connects to a running server."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Endpoint:
    """Where sysbench and the probes connect. The password never appears in ``repr``."""

    host: str
    port: int
    user: str
    password: str = field(repr=False)
    database: str = "sbtest"

    def sysbench_args(self) -> list[str]:
        """Where sysbench connects; the password goes through an option file, never the command line
        (see :func:`harness.sysbench.command_lines.connection_args`)."""
        return [
            "--db-driver=mysql",
            f"--mysql-host={self.host}",
            f"--mysql-port={self.port}",
            f"--mysql-user={self.user}",
            f"--mysql-db={self.database}",
        ]
