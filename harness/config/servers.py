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
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from harness.config.option_names import OptionNames, Resolved, option_names
from harness.config.toml_files import load_toml_model, unknown_name
from harness.errors import ConfigError
from harness.model import Server

_CPUSET = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
_VARIABLE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: The option groups of a my.cnf the server reads (``[mysqld]``, ``[mariadb-10.11]``, ``[client-server]`` ...).
_SERVER_GROUP = re.compile(r"^(mysqld|mariadbd?|server|client-server|galera)(-.*)?$")

#: Server variables that make the server run code or SQL from elsewhere, or open its files to SQL. A
#: benchmark never needs them, and a server file or ``--head-var`` from a pull request could use them to
#: run anything on the runner: refused unless the server file says ``allow_unsafe_variables = true``
#: (``--head-var`` never sets them). Canonical option names (lower case, ``_``): a written name is
#: resolved to its option first (harness/config/option_names.py), so ``init_fil`` or ``loose-Init-File``
#: is refused as ``init_file``.
UNSAFE_VARIABLES: dict[str, str] = {
    "init_file": "runs the SQL in a file at start",
    "init_connect": "runs SQL on every connection",
    "init_slave": "runs SQL when replication starts",
    "init_replica": "runs SQL when replication starts",
    "plugin_load": "loads a shared library into the server",
    "plugin_load_add": "loads a shared library into the server",
    "early_plugin_load": "loads a shared library into the server",
    "plugin_dir": "chooses where shared libraries are loaded from",
    "secure_file_priv": "lets SQL read and write files (LOAD DATA, SELECT ... INTO OUTFILE)",
    "local_infile": "lets the server ask the client for its files",
    "basedir": "reads the server's files from another folder",
    "character_sets_dir": "reads files from another folder",
    "lc_messages_dir": "reads files from another folder",
    "user": "runs the server as another account",
    "chroot": "changes the server's root folder",
}

#: Server variables that name a file or folder the server writes. A plain name or a relative path stays
#: in the run's data folder (``log_bin = binlog`` turns binary logging on there); an absolute path or
#: one with ``..`` would write anywhere the server's account can, so it is refused like the above.
PATH_VARIABLES = frozenset(
    {
        "log_bin",
        "log_bin_index",
        "log_bin_basename",
        "relay_log",
        "relay_log_index",
        "general_log_file",
        "slow_query_log_file",
        "log_error",
        "pid_file",
        "socket",
        "datadir",
        "tmpdir",
        "innodb_tmpdir",
        "innodb_data_home_dir",
        "innodb_log_group_home_dir",
        "innodb_undo_directory",
        "aria_log_dir_path",
        "server_audit_file_path",
    }
)


def _unsafe(option: str, value: str | None) -> str:
    """Why setting the option ``option`` (canonical; to ``value``, None: any value) is refused, or ''.

    The one place that says which options are unsafe: callers resolve the written name first
    (:meth:`OptionNames.resolve`), so a prefix, ``-``, case or ``loose_``/``skip_``/``maximum_`` spelling
    is judged as the option the server would set."""
    if option in UNSAFE_VARIABLES:
        return UNSAFE_VARIABLES[option]
    if option in PATH_VARIABLES and (value is None or value.startswith(("/", "~")) or ".." in Path(value).parts):
        return "names a path outside the server's data folder (give a plain file name)"
    return ""


def check_variables(
    variables: Mapping[str, str], where: str, options: OptionNames | None, *, allow_unsafe: bool = False
) -> dict[str, Resolved]:
    """Refuse what would not stay one ``name = value`` line of my.cnf, names the server would not read as
    exactly one option, and the variables that run code; return each name's resolved option.

    ``where`` names the source in the message (a file, ``--head-var``); ``options`` is the server's option
    list (None: no variables to resolve, only an empty mapping is accepted). A newline in a name or value
    would add a line of the user's choosing to the generated my.cnf; control characters have no place in
    either. With ``allow_unsafe`` a name the list does not know passes (a plugin's option, say).
    """
    resolved: dict[str, Resolved] = {}
    for name, value in variables.items():
        if not _VARIABLE_NAME.match(name):
            raise ConfigError(
                f"{where}: server variable name {name!r} is not a name (letters, digits, '_' and '-' only)"
            )
        if _CONTROL.search(value):
            raise ConfigError(
                f"{where}: the value of server variable '{name}' holds a newline or another control character "
                f"({value!r}); give it on one line"
            )
        if options is None:
            if allow_unsafe:
                continue  # trusted, and no option list for its version: nothing to resolve against
            raise ConfigError(f"{where}: server variable '{name}' cannot be checked: no option list (a bug in dbperf)")
        try:
            option = options.resolve(name, where)
        except ConfigError:
            if allow_unsafe:
                continue
            raise
        resolved[name] = option
        unsafe = _unsafe(option.option, value)
        if unsafe and not allow_unsafe:
            raise ConfigError(
                f"{where}: server variable {option.shown()} {unsafe}; dbperf refuses it unless the server file "
                "says allow_unsafe_variables = true (see servers/README.md)"
            )
    return resolved


def _server_group(group: str | None) -> bool:
    """Whether the server reads an option group (None: before any group, which the server refuses)."""
    return group is None or bool(_SERVER_GROUP.match(group))


def _check_config_file(path: Path, where: str, options: OptionNames | None) -> None:
    """The options of a my.cnf the server file names (unless it allows unsafe variables): no includes,
    every name in the groups the server reads resolved to one option (as :func:`check_variables`), and no
    unsafe variable in any group."""
    if options is None:
        raise ConfigError(f"{where}: {path.name} cannot be checked: no option list (a bug in dbperf)")
    group: str | None = None
    for raw in path.read_text(errors="replace").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("!"):
            raise ConfigError(
                f"{where}: {path.name} has {line.split()[0]!r}, which reads other files; put the options in "
                "the file itself, or set allow_unsafe_variables = true"
            )
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip().lower()
            continue
        if not line or line.startswith(("[", ";")):
            continue
        name, sep, value = line.partition("=")
        try:
            option = options.resolve(name, f"{where}: {path.name}")
        except ConfigError:
            if _server_group(group):
                raise
            continue  # another program's group (``[client]``): its names are not the server's
        unsafe = _unsafe(option.option, value.strip().strip("'\"") if sep else "")
        if unsafe:
            raise ConfigError(
                f"{where}: {path.name} sets {option.shown()}, which {unsafe}; dbperf refuses it unless the "
                "server file says allow_unsafe_variables = true (see servers/README.md)"
            )


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
    allow_unsafe_variables: StrictBool = False  # TOML's true only: "yes" is refused, never taken as true

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


def _options(spec: _ServerFile, path: Path) -> OptionNames | None:
    """The option list the file's names are resolved against; a trusted file (allow_unsafe_variables)
    of a version without one gets None (its names are not checked)."""
    try:
        return option_names(spec.flavour, spec.version)
    except ConfigError as err:
        if spec.allow_unsafe_variables:
            return None
        raise ConfigError(f"{path}: {err}") from None


def server_options(server: Server) -> OptionNames:
    """The option list a server's variable names are resolved against (its flavour's and version's)."""
    return option_names(server.flavour, server.version)


def load_server_file(path: Path) -> Server:
    """Read and validate one server file."""
    spec = load_toml_model(path, _ServerFile, "server", "servers/README.md")
    if spec.name != path.stem:
        raise ConfigError(f"{path}: name '{spec.name}' must match the file name '{path.stem}'")
    config_file = None
    if spec.config_file:
        folder = path.parent.resolve()
        config_file = (folder / spec.config_file).resolve()
        if not config_file.is_relative_to(folder):
            raise ConfigError(
                f"{path}: config_file '{spec.config_file}' is outside the servers folder {folder}; "
                "keep the my.cnf beside the server files (e.g. conf/mariadb.cnf)"
            )
        if not config_file.is_file():
            raise ConfigError(f"{path}: config_file '{spec.config_file}' does not exist next to it")
        if not spec.allow_unsafe_variables:
            _check_config_file(config_file, str(path), _options(spec, path))
    variables = {k: _to_str(v) for k, v in spec.variables.items()}
    check_variables(
        variables, str(path), _options(spec, path) if variables else None, allow_unsafe=spec.allow_unsafe_variables
    )
    return Server(
        name=spec.name,
        flavour=spec.flavour,
        version=spec.version,
        provider=spec.provider,
        description=spec.description,
        image=spec.image,
        binary=spec.binary,
        config_file=config_file,
        variables=variables,
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
        raise unknown_name("server", name, available_servers(servers_dir), servers_dir)
    return load_server_file(path)
