"""Settings, resolved as: command-line flag > ``DBPERF_*`` environment > ``[tool.dbperf]`` > defaults.

The option definitions live here once and are turned into both the ``dbperf`` CLI's options and the
pytest plugin's ``--dbperf-*`` options, so the two can never disagree.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.errors import ConfigError
from harness.model import Kind

OptionKind = Literal["str", "int", "path", "flag", "switch"]


@dataclass(frozen=True)
class OptionSpec:
    """One setting: its name (``--NAME`` in the CLI, ``--dbperf-NAME`` in pytest), env var and help."""

    name: str
    kind: OptionKind
    help: str
    default: str | None = None
    env: bool = True
    multiple: bool = False

    @property
    def env_var(self) -> str:
        return "DBPERF_" + self.name.upper().replace("-", "_")

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


#: The shared option family.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("server", "str", "server name (a file in servers/)", "mariadb-local"),
    OptionSpec("profile", "str", "scenario profile: quick, ci or full", "quick"),
    OptionSpec(
        "store",
        "path",
        "where runs are stored: a DuckDB file (Parquet copies go beside it), or a DuckLake shared by a fleet "
        "of runners, 'ducklake:postgres:dbname=... host=... user=... data_path=...' (docs/fleet.md)",
        "results/dbperf.duckdb",
    ),
    OptionSpec("threads", "str", "comma-separated thread counts overriding the scenario's", None),
    OptionSpec("time", "int", "measured seconds per run, overriding the profile", None),
    OptionSpec("warmup", "int", "warm-up seconds per run (measured, then discarded)", None),
    OptionSpec("repetitions", "int", "repetitions per thread count, overriding the profile", None),
    OptionSpec("servers-dir", "path", "folder of server files", "servers"),
    OptionSpec("scenarios-dir", "path", "folder of scenario files", "scenarios"),
    OptionSpec("baselines-dir", "path", "folder of baseline files", "baselines"),
    OptionSpec("cache-dir", "path", "folder for dataset snapshots", "~/.cache/dbperf"),
    OptionSpec(
        "cost",
        "switch",
        "cost mode: --cost measures only server instructions per transaction under callgrind (deterministic), "
        "--no-cost only timing; judging commands do both when neither is given",
        None,
    ),
)

OPTIONS_BY_NAME: dict[str, OptionSpec] = {o.name: o for o in OPTIONS}


def find_project_root(start: Path | None = None) -> Path:
    """The nearest folder upwards holding a pyproject.toml with ``[tool.dbperf]`` (else the cwd)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text())
            except tomllib.TOMLDecodeError:
                continue
            if "dbperf" in data.get("tool", {}):
                return folder
    return here


def _pyproject_settings(root: Path) -> dict[str, object]:
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return {}
    try:
        data = tomllib.loads(pyproject.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: not valid TOML ({exc}); fix the file") from exc
    table = data.get("tool", {}).get("dbperf", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.dbperf] must be a table")
    unknown = sorted(set(table) - {o.name for o in OPTIONS} - {o.dest for o in OPTIONS})
    if unknown:
        allowed = ", ".join(o.name for o in OPTIONS)
        raise ConfigError(f"{pyproject}: unknown [tool.dbperf] key(s) {unknown}; allowed: {allowed}")
    return {str(k).replace("_", "-"): v for k, v in table.items()}


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one invocation (CLI or pytest session)."""

    root: Path
    server: str
    profile: str
    store: Path | str  # a local file, or a DuckLake setting kept as written ("ducklake:postgres:...")
    servers_dir: Path
    scenarios_dir: Path
    baselines_dir: Path
    cache_dir: Path
    threads: tuple[int, ...] | None = None
    time: int | None = None
    warmup: int | None = None
    repetitions: int | None = None
    cost: bool | None = None  # True: cost runs only; False: timing only; None: the command's default

    def kinds(self, default: tuple[Kind, ...] = ("time", "cost")) -> tuple[Kind, ...]:
        """What an invocation measures: cost only, timing only, or the command's default."""
        if self.cost is None:
            return default
        return ("cost",) if self.cost else ("time",)


def _as_int(name: str, value: object) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise ConfigError(f"--{name} must be a whole number, got {value!r}") from None
    if number < 0:
        raise ConfigError(f"--{name} must not be negative, got {number}")
    return number


def _as_switch(name: str, value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    if text in {"", "auto"}:
        return None
    raise ConfigError(f"{name} takes true or false (1/0, yes/no, on/off), got {value!r}")


def parse_threads(value: str) -> tuple[int, ...]:
    """``"1,2,8"`` -> ``(1, 2, 8)`` with a clear error for anything else."""
    try:
        counts = tuple(int(part) for part in value.replace(" ", "").split(",") if part)
    except ValueError:
        raise ConfigError(f"--threads takes comma-separated whole numbers like 1,4,16; got {value!r}") from None
    if not counts or any(c < 1 or c > 4096 for c in counts):
        raise ConfigError(f"--threads values must be between 1 and 4096; got {value!r}")
    return counts


def resolve_settings(
    flags: Mapping[str, object | None],
    *,
    environ: Mapping[str, str] | None = None,
    root: Path | None = None,
) -> Settings:
    """Merge flags (by option name or dest), environment and pyproject into :class:`Settings`."""
    env = os.environ if environ is None else environ
    project = root or find_project_root()
    from_file = _pyproject_settings(project)
    values: dict[str, object | None] = {}
    for spec in OPTIONS:
        value = flags.get(spec.name, flags.get(spec.dest))
        if value is None and spec.env and spec.env_var in env:
            value = env[spec.env_var]
        if value is None:
            value = from_file.get(spec.name)
        if value is None:
            value = spec.default
        values[spec.name] = value

    def path(name: str) -> Path:
        raw = Path(str(values[name])).expanduser()
        return raw if raw.is_absolute() else project / raw

    threads_value = values["threads"]
    threads: tuple[int, ...] | None
    if threads_value is None:
        threads = None
    elif isinstance(threads_value, tuple | list):
        threads = tuple(int(t) for t in threads_value)
    else:
        threads = parse_threads(str(threads_value))

    def optional_int(name: str) -> int | None:
        value = values[name]
        return None if value is None else _as_int(name, value)

    time_s = optional_int("time")
    if time_s is not None and time_s < 1:
        raise ConfigError("--time must be at least 1 second")
    repetitions = optional_int("repetitions")
    if repetitions is not None and repetitions < 1:
        raise ConfigError("--repetitions must be at least 1")
    return Settings(
        root=project,
        server=str(values["server"]),
        profile=str(values["profile"]),
        store=store_location(values["store"], project),
        servers_dir=path("servers-dir"),
        scenarios_dir=path("scenarios-dir"),
        baselines_dir=path("baselines-dir"),
        cache_dir=path("cache-dir"),
        threads=threads,
        time=time_s,
        warmup=optional_int("warmup"),
        repetitions=repetitions,
        cost=_as_switch("cost", values["cost"]),
    )


def store_location(value: object, project: Path) -> Path | str:
    """A DuckLake setting stays a string (checked now: no password in it); anything else is a file path."""
    from harness.store.location import is_lake, parse_lake

    text = str(value)
    if is_lake(text):
        parse_lake(text)
        return text.strip()
    raw = Path(text).expanduser()
    return raw if raw.is_absolute() else project / raw


def current_git_sha(root: Path) -> str:
    """The commit being measured: ``DBPERF_GIT_SHA``, ``GITHUB_SHA`` or ``git rev-parse HEAD``."""
    for var in ("DBPERF_GIT_SHA", "GITHUB_SHA"):
        if os.environ.get(var):
            return os.environ[var]
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""
