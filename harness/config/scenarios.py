"""Scenario files (``scenarios/<name>.toml``): pinned sysbench workloads with per-profile settings.

One file serves every use through its profiles (``quick`` for tests, ``ci`` for the pull-request gate,
``full`` for nightly runs). Example::

    name = "oltp_point_select"
    script = "oltp_point_select"          # a bundled sysbench script, or "lua/<file>.lua"
    rand_type = "uniform"
    writes = false
    gate = ["qps", "p95_ms", "cpu_per_txn", "instr_per_txn"]

    [dataset]
    tables = 4
    table_size = 100000

    [min_effect]                          # smallest change worth failing a build for (fraction)
    qps = 0.03
    p95_ms = 0.05

    [profiles.quick]
    threads = [4]
    warmup_s = 1
    time_s = 3
    repetitions = 1
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from harness.config.toml_files import load_toml_model, unknown_name
from harness.errors import ConfigError
from harness.model import METRICS, POST_RUN_CHECKS, ROLLBACK_SCRIPTS, CostSettings, Scenario, stable_hash
from harness.model.metrics import CATALOGUE, DEFAULT_GATE
from harness.model.operation_stats import is_operation_metric

BUNDLED_DIR = Path("/usr/share/sysbench")
#: How ``prepare`` draws the rows it loads. 2: dbperf's wrapper seeds the generators per table
#: (``--dbperf-seeded-load``), so every preparation, on every server, loads the same rows; 1 (before): each
#: preparation drew its own. Part of every cost count's identity and of each dataset snapshot's key.
DATASET_LOADER = 2
BUNDLED_SCRIPTS = (
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
)
PROFILES = ("quick", "ci", "full")
#: Each gateable metric's minimum effect unless a scenario sets its own (the catalogue's).
DEFAULT_MIN_EFFECTS = {m.name: m.min_effect for m in CATALOGUE if m.gateable}


_TPS_NOTE = " (tps is the same data as qps and is judged once, as qps: remove it)"


class _Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    threads: list[int] = Field(min_length=1)
    warmup_s: int = Field(ge=0, le=3600)
    time_s: int = Field(ge=1, le=86400)
    repetitions: int = Field(ge=1, le=1000)
    tables: int | None = Field(default=None, ge=1, le=1024)
    table_size: int | None = Field(default=None, ge=1)

    @field_validator("threads")
    @classmethod
    def _threads(cls, value: list[int]) -> list[int]:
        if any(t < 1 or t > 4096 for t in value):
            raise ValueError("thread counts must be between 1 and 4096")
        return value


class _Cost(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    threads: list[int] = Field(default_factory=lambda: [1], min_length=1)
    warmup_events: int | None = Field(default=None, ge=0, le=10_000_000)
    events: int | None = Field(default=None, ge=1, le=10_000_000)
    repetitions: int = Field(default=3, ge=1, le=100)
    # booleans are TOML's true/false only (StrictBool): "yes" or 1 is refused, naming the file and field
    read_view: StrictBool | None = None
    purge_before_window: StrictBool = False
    warmup: Literal["commit", "rollback"] = "commit"
    rebuild_before_window: StrictBool = False
    warmup_seed: int = Field(default=1, ge=1, le=2**31 - 1)
    seed: int = Field(default=2, ge=1, le=2**31 - 1)

    @model_validator(mode="after")
    def _seeds(self) -> _Cost:
        if self.warmup_seed == self.seed:
            raise ValueError(
                f"warmup_seed and seed are both {self.seed}: the measured window would replay the warm-up's "
                "statements (a cache filled by the warm-up answers them); give them different values"
            )
        return self

    @field_validator("threads")
    @classmethod
    def _threads(cls, value: list[int]) -> list[int]:
        if any(t < 1 or t > 64 for t in value):
            raise ValueError("cost thread counts must be between 1 and 64 (valgrind runs threads one at a time)")
        return value


class _Dataset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tables: int = Field(ge=1, le=1024)
    table_size: int = Field(ge=1)
    #: scenarios whose scripts load the same tables alike share the snapshot under this name
    shared_as: str = Field(default="", pattern=r"^([a-z0-9][a-z0-9_]*)?$")
    #: the version of the rows the scenario's own loader writes (a custom script's ``prepare``): raise it
    #: when the script's loader changes its rows, so no snapshot of the old rows is restored again
    loader: int = Field(default=1, ge=1)


class _ScenarioFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    description: str = ""
    script: str
    rand_type: Literal["uniform", "gaussian", "special", "pareto"] = "uniform"
    writes: StrictBool = False
    fresh_server: StrictBool = True
    percentile: int = Field(default=95, ge=1, le=100)
    slo_p95_ms: float | None = Field(default=None, gt=0, le=100_000)
    gate: list[str] = Field(default_factory=lambda: list(DEFAULT_GATE))
    options: dict[str, str | int | bool] = Field(default_factory=dict)
    dataset: _Dataset
    min_effect: dict[str, float] = Field(default_factory=dict)
    profiles: dict[Literal["quick", "ci", "full"], _Profile]
    cost: _Cost = Field(default_factory=_Cost)
    table_names: list[str] = Field(default_factory=list)
    headline: str = ""
    headline_label: str = ""

    @field_validator("table_names")
    @classmethod
    def _table_names(cls, value: list[str]) -> list[str]:
        bad = [t for t in value if not re.fullmatch(r"[a-z_][a-z0-9_]{0,63}", t)]
        if bad:
            raise ValueError(f"table names {bad} must be lower-case identifiers")
        return value

    @field_validator("headline")
    @classmethod
    def _headline(cls, value: str) -> str:
        if value and not is_operation_metric(value):
            raise ValueError(f"headline {value!r} is not a per-operation metric such as 'NEW_ORDER.ops_per_min'")
        return value

    check: str = ""

    @field_validator("check")
    @classmethod
    def _check(cls, value: str) -> str:
        if value and value not in POST_RUN_CHECKS:
            raise ValueError(f"unknown post-run check '{value}'; known: {', '.join(POST_RUN_CHECKS)}")
        return value

    @field_validator("gate")
    @classmethod
    def _gate(cls, value: list[str]) -> list[str]:
        unknown = [m for m in value if m not in METRICS and not is_operation_metric(m)]
        if unknown:
            raise ValueError(
                f"unknown metric(s) {unknown}; allowed: {', '.join(METRICS)}, ops_per_s or per-operation "
                f"ones such as READ.p99_ms{_TPS_NOTE * ('tps' in unknown)}"
            )
        return value

    @field_validator("min_effect")
    @classmethod
    def _min_effect(cls, value: dict[str, float]) -> dict[str, float]:
        for metric, effect in value.items():
            if metric not in METRICS and not is_operation_metric(metric):
                raise ValueError(
                    f"unknown metric '{metric}'; allowed: {', '.join(METRICS)}{_TPS_NOTE * (metric == 'tps')}"
                )
            if not 0 < effect < 1:
                raise ValueError(f"{metric}: a minimum effect is a fraction between 0 and 1 (0.03 = 3 %)")
        return value

    @field_validator("options")
    @classmethod
    def _options(cls, value: dict[str, str | int | bool]) -> dict[str, str | int | bool]:
        reserved = {"threads", "time", "tables", "table_size", "rand_type", "rand-type", "report_interval"}
        clash = sorted(set(value) & reserved)
        if clash:
            raise ValueError(f"{clash} are set by dbperf from the scenario and profile, not in [options]")
        return value

    @model_validator(mode="after")
    def _profiles_present(self) -> _ScenarioFile:
        missing = [p for p in PROFILES if p not in self.profiles]
        if missing:
            raise ValueError(f"profiles {missing} are missing; every scenario defines quick, ci and full")
        return self


def resolve_script(script: str, scenarios_dir: Path) -> Path:
    """The Lua file a scenario runs: a bundled script by name, or a path under scenarios/."""
    if "/" not in script and not script.endswith(".lua"):
        if script not in BUNDLED_SCRIPTS:
            raise ConfigError(
                f"unknown sysbench script '{script}'; bundled: {', '.join(BUNDLED_SCRIPTS)}, "
                "or give a path like 'lua/my_workload.lua' under scenarios/"
            )
        return BUNDLED_DIR / f"{script}.lua"
    path = (scenarios_dir / script).resolve()
    if not path.is_file():
        raise ConfigError(f"sysbench script '{script}' not found at {path}")
    return path


def _to_str(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def load_scenario_file(path: Path, profile: str) -> Scenario:
    """Read, validate and resolve one scenario file for ``profile``."""
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile '{profile}'; choose one of {', '.join(PROFILES)}")
    spec = load_toml_model(path, _ScenarioFile, "scenario", "scenarios/README.md")
    if spec.name != path.stem:
        raise ConfigError(f"{path}: name '{spec.name}' must match the file name '{path.stem}'")
    try:
        script_path = resolve_script(spec.script, path.parent)
    except ConfigError as exc:
        raise ConfigError(f"{path}: field 'script': {exc}") from None
    prof = spec.profiles[profile]  # type: ignore[index]
    tables = prof.tables or spec.dataset.tables
    table_size = prof.table_size or spec.dataset.table_size
    options = {k: _to_str(v) for k, v in sorted(spec.options.items())}
    script_text = script_path.read_text() if script_path.is_file() else spec.script
    modules_text = ""
    if script_path.is_file() and "/" in spec.script:
        modules_text = "".join(m.read_text() for m in required_modules(script_path))  # they change numbers too
    script_text += modules_text
    definition = {
        "script": spec.script,
        "script_text": stable_hash(script_text),
        "rand_type": spec.rand_type,
        "options": options,
        "tables": tables,
        "table_size": table_size,
        "warmup_s": prof.warmup_s,
        "time_s": prof.time_s,
        "percentile": spec.percentile,
        "writes": spec.writes,
        "fresh_server": spec.fresh_server,
    }
    read_view = spec.cost.read_view if spec.cost.read_view is not None else spec.writes
    if spec.cost.purge_before_window and not read_view:
        raise ConfigError(
            f"{path}: [cost] purge_before_window needs a read view (read_view = true, the default for writes = true)"
        )
    if spec.cost.warmup == "rollback" and spec.script not in ROLLBACK_SCRIPTS:
        raise ConfigError(
            f'{path}: [cost] warmup = "rollback" rolls each warm-up event back, which only the scripts whose '
            "events are autocommit statements or one transaction ending in COMMIT, with no writes outside them, "
            f"allow ({', '.join(ROLLBACK_SCRIPTS)}), not {spec.script}"
        )
    cost = _cost_settings(spec)
    cost_definition = {
        key: definition[key] for key in ("script", "script_text", "rand_type", "options", "tables", "table_size")
    }
    if spec.dataset.loader > 1:  # only then: the other scenarios' cost identities stay as they were
        cost_definition["dataset_loader"] = spec.dataset.loader
    return Scenario(
        name=spec.name,
        script=spec.script,
        profile=profile,
        threads=tuple(prof.threads),
        warmup_s=prof.warmup_s,
        time_s=prof.time_s,
        repetitions=prof.repetitions,
        tables=tables,
        table_size=table_size,
        rand_type=spec.rand_type,
        description=spec.description,
        options=options,
        writes=spec.writes,
        fresh_server=spec.fresh_server or spec.writes,
        min_effects={**DEFAULT_MIN_EFFECTS, **spec.min_effect},
        gate_metrics=tuple(spec.gate),
        percentile=spec.percentile,
        slo_p95_ms=spec.slo_p95_ms,
        source=path.resolve(),
        definition_hash=stable_hash(definition),
        cost=cost,
        cost_hash=stable_hash({**cost_definition, "cost": _counted(cost), "kind": "cost", "loader": DATASET_LOADER}),
        check=spec.check,
        table_names=tuple(spec.table_names),
        # a shared dataset is loaded by the modules the scripts share: a change to them is a new dataset
        dataset_name=f"shared:{spec.dataset.shared_as}:{stable_hash(modules_text)}" if spec.dataset.shared_as else "",
        headline=spec.headline,
        headline_label=spec.headline_label,
        dataset_loader=spec.dataset.loader,
    )


_REQUIRE = re.compile(r"""require\s*\(?\s*["']([A-Za-z0-9_]+)["']""")


def required_modules(script: Path) -> list[Path]:
    """The Lua modules beside ``script`` that it requires, directly or through them, in order found."""
    found: list[Path] = []
    todo = [script]
    while todo:
        for name in _REQUIRE.findall(todo.pop(0).read_text()):
            module = script.parent / f"{name}.lua"
            if module.is_file() and module != script and module not in found:
                found.append(module)
                todo.append(module)
    return found


def _counted(cost: CostSettings) -> dict[str, object]:
    """The cost settings a count depends on (event counts, seeds, read view, purge before the window, how the
    warm-up ends its transactions, a rebuild before the window): not how many runs, nor threads (each run records
    its own). ``purge_before_window``, ``warmup`` and ``rebuild_before_window`` join only when not their defaults,
    so the scenarios without them keep the hash (and the baselines) they had before they existed."""
    counted = {k: v for k, v in dataclasses.asdict(cost).items() if k not in ("threads", "repetitions")}
    if not cost.purge_before_window:
        del counted["purge_before_window"]
    if cost.warmup == "commit":
        del counted["warmup"]
    if not cost.rebuild_before_window:
        del counted["rebuild_before_window"]
    return counted


def _cost_settings(spec: _ScenarioFile) -> CostSettings:
    """Cost-mode settings, with event counts that keep the count's CV under 0.1 % by default.

    Defaults: reads 500 warm-up and 1,000 measured transactions; writes 200 and 500, with a read view held
    from before the warm-up so purge cannot change the count. Heavier transactions (read_write) set smaller
    counts in their file. The noise these counts give: docs/work-vector.md, "Noise".
    """
    writes = spec.writes
    return CostSettings(
        threads=tuple(spec.cost.threads),
        warmup_events=spec.cost.warmup_events if spec.cost.warmup_events is not None else (200 if writes else 500),
        events=spec.cost.events if spec.cost.events is not None else (500 if writes else 1000),
        repetitions=spec.cost.repetitions,
        read_view=spec.cost.read_view if spec.cost.read_view is not None else writes,
        warmup_seed=spec.cost.warmup_seed,
        seed=spec.cost.seed,
        purge_before_window=spec.cost.purge_before_window,
        warmup=spec.cost.warmup,
        rebuild_before_window=spec.cost.rebuild_before_window,
    )


def available_scenarios(scenarios_dir: Path) -> list[str]:
    return sorted(p.stem for p in scenarios_dir.glob("*.toml"))


def load_scenario(name: str, scenarios_dir: Path, profile: str) -> Scenario:
    """The scenario called ``name`` for ``profile``; a clear error listing the known ones otherwise."""
    path = scenarios_dir / f"{name}.toml"
    if not path.is_file():
        raise unknown_name("scenario", name, available_scenarios(scenarios_dir), scenarios_dir)
    return load_scenario_file(path, profile)


def load_all(scenarios_dir: Path, profile: str) -> list[Scenario]:
    return [load_scenario_file(p, profile) for p in sorted(scenarios_dir.glob("*.toml"))]


def select_scenarios(selection: Sequence[str], scenarios_dir: Path) -> tuple[str, ...]:
    """Scenario names for a selection: names, shell patterns (``oltp_*``) or ``all`` (the catalogue).

    Names are kept as given (an unknown one fails later with the list of known scenarios); a pattern
    must match at least one scenario. Order: as given, each pattern's matches sorted, no repeats.
    """
    known = available_scenarios(scenarios_dir)
    out: list[str] = []
    for item in selection:
        if item == "all":
            out += known
        elif any(ch in item for ch in "*?["):
            matches = [name for name in known if fnmatch.fnmatchcase(name, item)]
            if not matches:
                raise ConfigError(
                    f"no scenario matches {item!r} in {scenarios_dir}; known: {', '.join(known) or 'none'}"
                )
            out += matches
        else:
            out.append(item)
    return tuple(dict.fromkeys(out))
