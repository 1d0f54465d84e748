"""The server record: what a server is, how it is started and configured (one file in servers/)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

Flavour = Literal["mariadb", "mysql"]
ProviderKind = Literal["local", "container", "external"]


@dataclass(frozen=True)
class Server:
    """A server to benchmark: what it is, how to start it, how to configure it."""

    name: str
    flavour: Flavour
    version: str
    provider: ProviderKind
    description: str = ""
    image: str | None = None
    binary: str | None = None
    config_file: Path | None = None
    variables: Mapping[str, str] = field(default_factory=dict)
    cpuset: str | None = None
    client_cpuset: str | None = None
    cpus: float | None = None
    memory_limit: str | None = None
    host: str = "127.0.0.1"
    port: int | None = None
    user: str | None = None
    password_env: str | None = None
    database: str = "sbtest"
    source: Path | None = None
    #: Server variables set for one invocation only (``--head-var``), in no server file: runs of such a
    #: server are a one-off configuration, kept out of the server's trend series (already in ``variables``).
    one_off: Mapping[str, str] = field(default_factory=dict)

    def with_variables(self, overrides: Mapping[str, str], name: str | None = None) -> Server:
        """A copy of this server with some server variables overridden (``--head-var``)."""
        return replace(
            self,
            variables={**self.variables, **overrides},
            one_off={**self.one_off, **overrides},
            name=name or f"{self.name}+{variables_text(overrides)}",
        )

    def identity(self) -> dict[str, object]:
        """What makes two servers the same configuration (hashed into the config hash)."""
        config_text = None
        if self.config_file is not None and self.config_file.exists():
            config_text = self.config_file.read_text()
        return {
            "flavour": self.flavour,
            "version": self.version,
            "provider": self.provider,
            "image": self.image,
            "binary": self.binary,
            "config": config_text,
            "variables": dict(sorted(self.variables.items())),
            "cpuset": self.cpuset,
            "cpus": self.cpus,
            "memory_limit": self.memory_limit,
        }


def variables_text(variables: Mapping[str, str]) -> str:
    """``a=1,b=2``: server variables in one short line, sorted (a ``--head-var`` server's name suffix)."""
    return ",".join(f"{k}={v}" for k, v in sorted(variables.items()))
