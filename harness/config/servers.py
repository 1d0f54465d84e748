"""Server files (``servers/<name>.toml``), validated with pydantic.

A server names a flavour and a version pin, a provider (``local`` binaries, a ``container`` image, or an
``external`` endpoint), an optional my.cnf, server variables, and CPU/memory placement. Example::

    name = "mariadb-10.11"
    flavour = "mariadb"
    version = "10.11"
    provider = "container"
    image = "dbperf/mariadb:10.11"
    config_file = "mariadb.cnf"
    cpuset = "0"
    client_cpuset = "1"
    memory_limit = "4g"

    [variables]
    innodb_buffer_pool_size = "1G"
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.config.files import load_toml_model
from harness.errors import ConfigError
from harness.model import Server

_CPUSET = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


class _ServerFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
    flavour: Literal["mariadb", "mysql"]
    version: str = Field(min_length=1, description="version pin: the server's version must start with it")
    provider: Literal["local", "container", "external"]
    description: str = ""
    image: str | None = None
    binary: str | None = None
    config_file: str | None = None
    variables: dict[str, str | int | float | bool] = Field(default_factory=dict)
    cpuset: str | None = None
    client_cpuset: str | None = None
    cpus: float | None = Field(default=None, gt=0)
    memory_limit: str | None = Field(default=None, pattern=r"^\d+[bkmgBKMG]?$")
    host: str = "127.0.0.1"
    port: int | None = Field(default=None, ge=1, le=65535)
    user: str | None = None
    password_env: str | None = None
    database: str = "sbtest"

    @field_validator("cpuset", "client_cpuset")
    @classmethod
    def _cpuset(cls, value: str | None) -> str | None:
        if value is not None and not _CPUSET.match(value):
            raise ValueError("must be a CPU list like '0', '0-3' or '0,2'")
        return value

    @model_validator(mode="after")
    def _provider_fields(self) -> _ServerFile:
        if self.provider == "container" and not self.image:
            raise ValueError("a container server needs 'image' (e.g. 'dbperf/mariadb:10.11')")
        if self.provider == "external" and (self.port is None or not self.user):
            raise ValueError("an external server needs 'host', 'port', 'user' and 'password_env'")
        return self


def _to_str(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)


def load_server_file(path: Path) -> Server:
    """Read and validate one server file."""
    spec = load_toml_model(path, _ServerFile, "server", "servers/README.md")
    if spec.name != path.stem:
        raise ConfigError(f"{path}: name '{spec.name}' must match the file name '{path.stem}'")
    config_file = None
    if spec.config_file:
        config_file = (path.parent / spec.config_file).resolve()
        if not config_file.is_file():
            raise ConfigError(f"{path}: config_file '{spec.config_file}' does not exist next to it")
    return Server(
        name=spec.name,
        flavour=spec.flavour,
        version=spec.version,
        provider=spec.provider,
        description=spec.description,
        image=spec.image,
        binary=spec.binary,
        config_file=config_file,
        variables={k: _to_str(v) for k, v in spec.variables.items()},
        cpuset=spec.cpuset,
        client_cpuset=spec.client_cpuset,
        cpus=spec.cpus,
        memory_limit=spec.memory_limit,
        host=spec.host,
        port=spec.port,
        user=spec.user,
        password_env=spec.password_env,
        database=spec.database,
        source=path.resolve(),
    )


def available_servers(servers_dir: Path) -> list[str]:
    return sorted(p.stem for p in servers_dir.glob("*.toml"))


def load_server(name: str, servers_dir: Path) -> Server:
    """The server called ``name``; a clear error listing the known ones otherwise."""
    path = servers_dir / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(available_servers(servers_dir)) or "none"
        raise ConfigError(f"unknown server '{name}' (known in {servers_dir}: {known})")
    return load_server_file(path)
