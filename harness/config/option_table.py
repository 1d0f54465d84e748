"""The shared option family: every setting defined once, turned into both the ``dbperf`` CLI's options
(:mod:`harness.cli.options`) and the pytest plugin's ``--dbperf-*`` options, so the two can never
disagree. One name per concept: the flag ``--NAME``, the pytest option ``--dbperf-NAME``, the variable
``DBPERF_NAME`` (dashes become underscores) and the ``[tool.dbperf]`` key ``NAME``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harness.model import METRICS

OptionKind = Literal["str", "list", "int", "float", "path", "flag", "switch"]


@dataclass(frozen=True)
class OptionSpec:
    """One setting: its name (``--NAME`` in the CLI, ``--dbperf-NAME`` in pytest), env var and help."""

    name: str
    kind: OptionKind
    help: str
    default: str | None = None
    short: str | None = None
    metavar: str | None = None

    @property
    def env_var(self) -> str:
        return "DBPERF_" + self.name.upper().replace("-", "_")

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


#: The shared option family.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("server", "list", "server name (a file in servers/)", "mariadb-local", metavar="SERVER"),
    OptionSpec(
        "scenario",
        "list",
        "scenario names or shell patterns (comma-separated, repeatable); all = the whole catalogue",
        short="-s",
        metavar="SCENARIO",
    ),
    OptionSpec("profile", "str", "scenario profile: quick, ci or full", "quick", metavar="PROFILE"),
    OptionSpec(
        "store",
        "path",
        "where runs are stored: a DuckDB file (Parquet copies go beside it), or a DuckLake shared by a fleet "
        "of runners, 'ducklake:postgres:dbname=... host=... user=... data_path=...' (docs/fleet.md)",
        "results/dbperf.duckdb",
    ),
    OptionSpec(
        "store-timeout",
        "int",
        "seconds a DuckLake store may take to open or to save a run (a catalog that does not answer, writers "
        "holding its lock) before dbperf gives up: a run is then kept in an unsaved-run file",
        "600",
        metavar="SECONDS",
    ),
    OptionSpec("threads", "list", "thread counts, comma-separated (e.g. 1,4,16), overriding the profile's"),
    OptionSpec("time", "int", "measured seconds per run, overriding the profile"),
    OptionSpec("warmup", "int", "warm-up seconds per run (measured, then discarded)"),
    OptionSpec("repetitions", "int", "repetitions per thread count (A/B: pairs), overriding the profile"),
    OptionSpec("servers-dir", "path", "folder of server files", "servers"),
    OptionSpec("scenarios-dir", "path", "folder of scenario files", "scenarios"),
    OptionSpec("baselines-dir", "path", "folder of baseline files", "baselines"),
    OptionSpec("cache-dir", "path", "folder for dataset snapshots", "~/.cache/dbperf"),
    OptionSpec(
        "testbed-class",
        "str",
        "this machine's hardware class (e.g. a fleet's runner label): it names the runs' testbed and joins "
        "its fingerprint, so classes never share a series or a baseline",
        metavar="CLASS",
    ),
    OptionSpec(
        "cost",
        "switch",
        "cost mode: --cost measures only server instructions per transaction under callgrind (deterministic), "
        "--no-cost only timing; judging commands do both when neither is given",
    ),
    OptionSpec(
        "max-minutes",
        "float",
        "the most wall time, in minutes, a design check may raise the planned timing runs to before it stops "
        "and names the cheaper ways (it never asks)",
        "10",
        metavar="MINUTES",
    ),
    OptionSpec("yes", "flag", "run a design the check raised beyond --max-minutes anyway"),
    OptionSpec(
        "measure-unjudged",
        "flag",
        "measure scenarios that have no baseline to judge them against anyway (their runs are stored); "
        "without it a gate says so and skips them before measuring",
    ),
    OptionSpec("alpha", "float", "family-wise error rate of the verdicts (Holm across every gating test)", "0.02"),
    OptionSpec("strict", "flag", "fail (exit 1) on inconclusive verdicts too"),
    OptionSpec(
        "min-effect",
        "list",
        "smallest change that counts, overriding the scenario's: METRIC=FRACTION or METRIC=N% (e.g. qps=3%)",
        metavar="METRIC=SIZE",
    ),
    OptionSpec(
        "gate-metric",
        "list",
        f"metrics that gate (decide the exit code), overriding the scenario's; of {', '.join(METRICS)}",
        metavar="METRIC",
    ),
    OptionSpec(
        "forecast-gate",
        "flag",
        "let a cost comparison's forecast of single-client TPS decide the exit code too (a forecast drop "
        "beyond the scenario's QPS minimum effect over its whole interval is a regression; docs/forecast.md)",
    ),
)


OPTIONS_BY_NAME: dict[str, OptionSpec] = {o.name: o for o in OPTIONS}
