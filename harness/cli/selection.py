"""Which stored runs a reading command is about: filters and the ``--group``/``--all`` choice."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from harness.config.values import parse_threads, split_list
from harness.errors import ConfigError, StoreError
from harness.model import RunResult
from harness.store import ResultStore

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class RunFilter:
    """Filters of stored runs; empty means any. Scenario and server values may be shell patterns."""

    scenarios: tuple[str, ...] = ()
    servers: tuple[str, ...] = ()
    threads: tuple[int, ...] = ()
    profiles: tuple[str, ...] = ()

    def store_args(self) -> dict[str, Any]:
        """The filters the store can apply itself (one exact value each)."""
        args: dict[str, Any] = {}
        if len(self.scenarios) == 1 and not _pattern(self.scenarios[0]):
            args["scenario"] = self.scenarios[0]
        if len(self.servers) == 1 and not _pattern(self.servers[0]):
            args["server"] = self.servers[0]
        if len(self.threads) == 1:
            args["threads"] = self.threads[0]
        return args

    def matches(self, scenario: str, server: str, threads: int, profile: str) -> bool:
        return (
            _match(scenario, self.scenarios)
            and _match(server, self.servers)
            and (not self.threads or threads in self.threads)
            and (not self.profiles or profile in self.profiles)
        )

    def keep(self, runs: Sequence[RunResult]) -> list[RunResult]:
        return [r for r in runs if self.matches(r.scenario, r.server, r.threads, r.profile)]

    def table(self, table: pa.Table) -> pa.Table:
        """The rows of a metrics table that match."""
        if table.num_rows == 0:
            return table
        rows = zip(
            table.column("scenario").to_pylist(),
            table.column("server").to_pylist(),
            table.column("threads").to_pylist(),
            table.column("profile").to_pylist(),
            strict=True,
        )
        mask = [self.matches(str(s), str(t), int(n), str(p or "")) for s, t, n, p in rows]
        import pyarrow as pa  # the reading commands that filter Arrow tables load it; `dbperf runs` does not

        return table.filter(pa.array(mask, type=pa.bool_())) if not all(mask) else table

    def describe(self) -> str:
        parts = [
            f"{label} {', '.join(map(str, values))}"
            for label, values in (
                ("scenario", self.scenarios),
                ("server", self.servers),
                ("threads", self.threads),
                ("profile", self.profiles),
            )
            if values
        ]
        return "; ".join(parts) or "no filter"


def _pattern(value: str) -> bool:
    return any(ch in value for ch in "*?[")


def _match(value: str, wanted: Sequence[str]) -> bool:
    return not wanted or any(fnmatch.fnmatchcase(value, w) for w in wanted)


def pop_filter(kwargs: dict[str, Any]) -> RunFilter:
    """The :class:`RunFilter` of the ``filter_*`` options in ``kwargs`` (removed from it)."""
    values = {name: kwargs.pop(f"filter_{name}", ()) for name in ("scenario", "server", "threads", "profile")}
    threads = parse_threads(values["threads"]) if split_list(values["threads"]) else ()
    profiles = split_list(values["profile"])
    unknown = [p for p in profiles if p not in ("quick", "ci", "full")]
    if unknown:
        raise ConfigError(f"--profile takes quick, ci or full; got {', '.join(unknown)}")
    return RunFilter(split_list(values["scenario"]), split_list(values["server"]), threads, profiles)


def note(message: str) -> None:
    click.echo(message, err=True)


def select_runs(
    store: ResultStore,
    run_filter: RunFilter,
    *,
    group: str | None,
    all_runs: bool,
    quiet: bool = False,
) -> tuple[list[RunResult], str]:
    """The runs a report is about, and a phrase saying which.

    ``--group`` picks one group; otherwise the group of the newest matching run (one ``dbperf run``
    or ``ci run``), unless ``--all`` asks for every matching run.
    """
    if group is not None and all_runs:
        raise ConfigError("give --group ID or --all, not both")
    candidates = run_filter.keep(store.runs(**run_filter.store_args(), group_id=group))
    if not candidates:
        where = f"group {group} and {run_filter.describe()}" if group else run_filter.describe()
        raise StoreError(f"no runs match ({where}) in {store.location}: `dbperf runs` lists what is stored")
    if group is None and not all_runs:
        group = candidates[0].group_id or None
        if group is None:
            raise StoreError(
                f"the newest matching run ({candidates[0].run_id}) belongs to no group: pass --group ID, "
                "or --all for every matching run"
            )
        if not quiet:
            note(f"dbperf: using the newest group {group} (choose another with --group, or --all)")
        candidates = [r for r in candidates if r.group_id == group]
    described = f"group {group}" if group else "all matching runs"
    return sorted(candidates, key=lambda r: (r.scenario, r.server, r.threads, r.repetition, r.run_id)), described


def filter_in(table: pa.Table, column: str, values: Sequence[object]) -> pa.Table:
    if not values:
        return table
    import pyarrow as pa
    import pyarrow.compute as pc

    return table.filter(pc.is_in(table.column(column), value_set=pa.array(list(values))))
