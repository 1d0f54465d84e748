"""Settings, resolved as: command-line flag > ``DBPERF_*`` environment > ``[tool.dbperf]`` > defaults.

The options themselves are defined once in :mod:`harness.config.option_table` (shared by the CLI and the
pytest plugin) and their values parsed by :mod:`harness.config.values`; this module finds the project,
reads ``[tool.dbperf]`` and the environment, and builds the :class:`Settings` record.

A command resolves only the options it has: ``DBPERF_TIME=x dbperf runs`` is fine (``runs`` does
not time anything), while ``DBPERF_TIME=x dbperf run`` says what is wrong with ``DBPERF_TIME``.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.config.option_table import OPTIONS, OPTIONS_BY_NAME
from harness.config.packaged import PACKAGE_CATALOGUE, install_cost_baselines
from harness.config.values import (
    as_bool,
    as_int,
    parse_alpha,
    parse_metrics,
    parse_min_effects,
    parse_threads,
    split_list,
)
from harness.errors import ConfigError
from harness.model import Kind, Scenario
from harness.workspace import child_environment


def find_project_root(start: Path | None = None) -> Path | None:
    """The nearest folder upwards holding a pyproject.toml with ``[tool.dbperf]`` (None if there is none)."""
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
    return None


def data_home(environ: Mapping[str, str]) -> Path:
    """Where results go outside a project: ``$XDG_DATA_HOME/dbperf`` (default ``~/.local/share/dbperf``)."""
    base = environ.get("XDG_DATA_HOME") or str(Path("~/.local/share").expanduser())
    return Path(base).expanduser() / "dbperf"


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
    """Resolved settings of one invocation (CLI or pytest session).

    ``server`` is the first (usually the only) of ``servers``; ``scenarios`` holds the selection as
    given (names, shell patterns or ``all``), expanded against a catalogue by
    :func:`harness.config.scenarios.select_scenarios`.
    """

    root: Path
    server: str
    profile: str
    store: Path | str  # a local file, or a DuckLake setting kept as written ("ducklake:postgres:...")
    servers_dir: Path
    scenarios_dir: Path
    baselines_dir: Path
    cache_dir: Path
    threads: tuple[int, ...] | None = None
    forecast_gate: bool = False  # a cost comparison's forecast decides the exit code too (docs/forecast.md)
    time: int | None = None
    warmup: int | None = None
    repetitions: int | None = None
    cost: bool | None = None  # True: cost runs only; False: timing only; None: the command's default
    servers: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    alpha: float = 0.02
    strict: bool = False
    min_effects: Mapping[str, float] = field(default_factory=dict)
    gate_metrics: tuple[str, ...] | None = None
    testbed_class: str = ""
    store_timeout: int = 600  # seconds a DuckLake may take to open or to save a run
    max_minutes: float = 10.0  # the most a design check may raise the timing runs to without --yes
    yes: bool = False
    measure_unjudged: bool = False  # a gate measures what has no baseline to judge it (pipeline/judgeable.py)

    @property
    def raise_limit_s(self) -> float | None:
        """The seconds of raised work an invocation takes without ``--yes`` (None: no limit)."""
        return None if self.yes else self.max_minutes * 60

    def kinds(self, default: tuple[Kind, ...] = ("time", "cost")) -> tuple[Kind, ...]:
        """What an invocation measures: cost only, timing only, or the command's default."""
        if self.cost is None:
            return default
        return ("cost",) if self.cost else ("time",)

    def one_server(self) -> str:
        """The server of a command that runs on one server (a clear error when several were given)."""
        if len(self.servers) > 1:
            raise ConfigError(f"--server takes one server here, got {', '.join(self.servers)}")
        return self.server


def apply_overrides(scenario: Scenario, settings: Settings) -> Scenario:
    """The scenario with the settings' overrides: threads, durations, repetitions, minimum effects, gate."""
    scenario = scenario.with_overrides(
        threads=settings.threads, time_s=settings.time, warmup_s=settings.warmup, repetitions=settings.repetitions
    )
    if settings.min_effects:
        scenario = replace(scenario, min_effects={**scenario.min_effects, **settings.min_effects})
    if settings.gate_metrics is not None:
        scenario = replace(scenario, gate_metrics=settings.gate_metrics)
    return scenario


def resolve_settings(
    flags: Mapping[str, object | None],
    *,
    environ: Mapping[str, str] | None = None,
    root: Path | None = None,
    names: Collection[str] | None = None,
    defaults: Mapping[str, str] | None = None,
) -> Settings:
    """Merge flags (by option name or dest), environment and pyproject into :class:`Settings`.

    ``names`` are the options the command has (default: all): only those are read from the
    environment and pyproject and validated; the others keep their defaults. ``defaults`` replace
    the family's defaults for this command (e.g. the ``ci`` profile of ``dbperf ci run``).
    """
    env = os.environ if environ is None else environ
    found = root or find_project_root()
    project = found or Path.cwd().resolve()
    from_file = _pyproject_settings(project) if found is not None or root is not None else {}
    used = set(OPTIONS_BY_NAME) if names is None else {n.replace("_", "-") for n in names}
    values: dict[str, object | None] = {}
    for spec in OPTIONS:
        default = (defaults or {}).get(spec.name, spec.default)
        value: object | None = None
        if spec.name in used:
            value = flags.get(spec.name, flags.get(spec.dest))
            if value in ((), [], "") or (value is False and spec.kind == "flag"):
                value = None
            if value is None and env.get(spec.env_var, "") != "":
                value = env[spec.env_var]
            if value is None:
                value = from_file.get(spec.name)
        values[spec.name] = default if value is None else value

    def path(name: str) -> Path:
        raw = Path(str(values[name])).expanduser()
        if raw.is_absolute():
            return raw
        if found is None and root is None and values[name] == OPTIONS_BY_NAME[name].default:
            return _outside_project(name, env)
        return project / raw

    def optional_int(name: str) -> int | None:
        value = values[name]
        return None if value is None else as_int(name, value)

    threads = None if values["threads"] is None else parse_threads(values["threads"])
    time_s = optional_int("time")
    if time_s is not None and time_s < 1:
        raise ConfigError("--time must be at least 1 second")
    repetitions = optional_int("repetitions")
    if repetitions is not None and repetitions < 1:
        raise ConfigError("--repetitions must be at least 1")
    store_timeout = optional_int("store-timeout")
    if store_timeout is not None and store_timeout < 1:
        raise ConfigError("--store-timeout must be at least 1 second")
    try:
        max_minutes = float(str(values["max-minutes"]))
    except ValueError:
        raise ConfigError(f"--max-minutes takes minutes (e.g. 10 or 2.5), got {values['max-minutes']!r}") from None
    if not 0 < max_minutes < float("inf"):
        raise ConfigError(f"--max-minutes must be more than 0 minutes, got {values['max-minutes']}")
    servers = split_list(values["server"]) or ("mariadb-local",)
    gate = values["gate-metric"]
    baselines_dir = path("baselines-dir")
    default_baselines = values["baselines-dir"] == OPTIONS_BY_NAME["baselines-dir"].default
    if found is None and root is None and "baselines-dir" in used and default_baselines:
        install_cost_baselines(baselines_dir)  # outside a project: the cost baselines the wheel carries
    return Settings(
        root=project,
        server=servers[0],
        servers=servers,
        scenarios=split_list(values["scenario"]),
        profile=str(values["profile"]),
        store=store_location(values["store"], project) if _is_lake(values["store"]) else path("store"),
        servers_dir=path("servers-dir"),
        scenarios_dir=path("scenarios-dir"),
        baselines_dir=baselines_dir,
        cache_dir=path("cache-dir"),
        threads=threads,
        forecast_gate=bool(as_bool("--forecast-gate", values["forecast-gate"])),
        time=time_s,
        warmup=optional_int("warmup"),
        repetitions=repetitions,
        cost=as_bool("--cost", values["cost"]),
        alpha=parse_alpha(values["alpha"]),
        strict=bool(as_bool("--strict", values["strict"])),
        min_effects=parse_min_effects(values["min-effect"]),
        gate_metrics=None if gate is None else parse_metrics(gate),
        testbed_class=str(values["testbed-class"] or "").strip(),
        store_timeout=600 if store_timeout is None else store_timeout,
        max_minutes=max_minutes,
        yes=bool(as_bool("--yes", values["yes"])),
        measure_unjudged=bool(as_bool("--measure-unjudged", values["measure-unjudged"])),
    )


def _is_lake(value: object) -> bool:
    from harness.store.location import is_lake

    return is_lake(str(value))


def store_location(value: object, project: Path) -> Path | str:
    """A DuckLake setting stays a string (checked now: no password in it); anything else is a file path."""
    from harness.store.location import is_lake, parse_lake

    text = str(value)
    if is_lake(text):
        parse_lake(text)
        return text.strip()
    raw = Path(text).expanduser()
    return raw if raw.is_absolute() else project / raw


def _outside_project(name: str, environ: Mapping[str, str]) -> Path:
    """Defaults outside a project checkout: the packaged catalogue, results in the user's data folder."""
    if name == "store":
        return data_home(environ) / "dbperf.duckdb"
    if name == "servers-dir":
        return PACKAGE_CATALOGUE / "servers"
    if name == "scenarios-dir":
        return PACKAGE_CATALOGUE / "scenarios"
    if name == "baselines-dir":
        return data_home(environ) / "baselines"
    return Path(str(OPTIONS_BY_NAME[name].default)).expanduser()


def current_git_sha(root: Path) -> str:
    """The commit being measured: ``DBPERF_GIT_SHA``, ``GITHUB_SHA`` or ``git rev-parse HEAD``."""
    for var in ("DBPERF_GIT_SHA", "GITHUB_SHA"):
        if os.environ.get(var):
            return os.environ[var]
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
            env=child_environment(),
        )
    except OSError:
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def uncommitted_changes(root: Path) -> bool:
    """Whether the checkout at ``root`` has tracked files changed since its commit (``git describe
    --dirty``'s rule: untracked files do not count). False when the commit is named from outside
    (``DBPERF_GIT_SHA``, ``GITHUB_SHA``: the caller vouches for it) or ``root`` is no git checkout."""
    if any(os.environ.get(var) for var in ("DBPERF_GIT_SHA", "GITHUB_SHA")):
        return False
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=False,
            env=child_environment(),
        )
    except OSError:
        return False
    return out.returncode == 0 and bool(out.stdout.strip())
