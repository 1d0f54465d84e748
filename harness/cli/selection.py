"""Which stored runs a reading command is about: filters and the ``--group``/``--all`` choice.

One rule for filters that select nothing, in every command that filters (``runs``, ``report``, ``trend``,
``changes``, ``export``, ``judge``, ``baseline show``, ``scenarios``):

* a ``--scenario``/``--server`` value (name or pattern) that matches nothing in the catalogue nor in
  what is stored is a usage error: one line with the nearest names, exit 2 (:func:`check_names`), as is
  a ``--group`` that is not stored;
* a filter that names real things but matches no stored run is not an error: the command says
  ``no runs match (...)`` and exits 0 (:func:`no_runs`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness.config.settings import Settings
from harness.config.values import did_you_mean, parse_threads, split_list
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


def check_names(
    run_filter: RunFilter,
    *,
    catalogue: tuple[Path, Path] | None,
    stored: Callable[[], tuple[Iterable[str], Iterable[str]]] | None,
    stored_as: str = "the store",
) -> None:
    """Refuse a scenario or server filter that matches nothing in the catalogue (the scenarios and servers
    folders) nor in ``stored()`` (the scenario and server names stored, read only when the catalogue
    does not have a name), with the nearest names of both (did you mean ...)."""
    wanted = {"scenario": run_filter.scenarios, "server": run_filter.servers}
    if not any(wanted.values()):
        return
    known: dict[str, set[str]] = {"scenario": set(), "server": set()}
    if catalogue is not None:
        for what, folder in zip(("scenario", "server"), catalogue, strict=True):
            known[what].update(p.stem for p in folder.glob("*.toml"))

    def unmatched() -> list[tuple[str, str]]:
        return [(what, v) for what, values in wanted.items() for v in values if not _any_match(known[what], v)]

    missing = unmatched()
    if missing and stored is not None:
        scenarios, servers = stored()
        known["scenario"].update(scenarios)
        known["server"].update(servers)
        missing = unmatched()
    if not missing:
        return
    what, value = missing[0]
    places = (["the catalogue"] if catalogue is not None else []) + ([stored_as] if stored is not None else [])
    hint = did_you_mean(value, known[what]) or f"known: {', '.join(sorted(known[what])) or 'none'}"
    raise ConfigError(f"--{what} {value}: no {what} of that name in {' nor in '.join(places)}; {hint}")


def _any_match(known: set[str], wanted: str) -> bool:
    return wanted in known or (_pattern(wanted) and any(fnmatch.fnmatchcase(k, wanted) for k in known))


def stored_names(store: ResultStore) -> Callable[[], tuple[list[str], list[str]]]:
    """The scenario and server names of every stored run, read when first asked."""

    def names() -> tuple[list[str], list[str]]:
        table = store.metrics_table()
        scenarios = sorted({str(v) for v in table.column("scenario").to_pylist()})
        return scenarios, sorted({str(v) for v in table.column("server").to_pylist()})

    return names


def check_filter(run_filter: RunFilter, store: ResultStore, settings: Settings) -> None:
    """:func:`check_names` for a command that reads stored runs: the project's catalogue and the store."""
    check_names(run_filter, catalogue=(settings.scenarios_dir, settings.servers_dir), stored=stored_names(store))


def no_runs(message: str, *, as_json: bool = False, empty: str = "[]") -> int:
    """A valid filter that matched no stored run: the line on stderr (``empty`` on stdout with --json); exit 0."""
    if as_json:
        click.echo(empty)
    click.echo(f"dbperf: {message}", err=True)
    return 0


def check_group(store: ResultStore, group: str | None) -> None:
    """A ``--group`` that is not stored at all is a usage error (a typo, or another store)."""
    if group is not None and not store.runs(group_id=group, limit=1):
        raise ConfigError(f"--group {group}: no such group in {store.location}; `dbperf runs` shows each run's group")


def nothing_matches(
    store: ResultStore, run_filter: RunFilter, group: str | None = None, *, ok: bool = False, also: Sequence[str] = ()
) -> str:
    """``no runs match (scenario x; group G) in STORE: ...``, or ``no runs stored in STORE (try: ...)``
    when nothing narrowed the selection (``also``: further conditions, e.g. ``status failed``)."""
    runs = "ok runs" if ok else "runs"
    given = [run_filter.describe()] if run_filter != RunFilter() else []
    given += [*also, *([f"group {group}"] if group else [])]
    if not given:
        return f"no {runs} stored in {store.location} (try: dbperf run --scenario oltp_point_select)"
    return f"no {runs} match ({'; '.join(given)}) in {store.location}: `dbperf runs` lists what is stored"


def select_runs(
    store: ResultStore,
    run_filter: RunFilter,
    *,
    group: str | None,
    all_runs: bool,
    quiet: bool = False,
    with_profiles: bool = False,
) -> tuple[list[RunResult], str]:
    """The runs a report is about, and a phrase saying which.

    ``--group`` picks one group; otherwise the group of the newest matching run (one ``dbperf run``
    or ``ci run``), unless ``--all`` asks for every matching run. No matching run: ``[]`` and the line
    that says so (:func:`no_runs` prints it); a ``--group`` that is not stored at all is a usage error.
    ``with_profiles`` reads cost runs' profiles and callgrind dumps too (for flame graphs).
    """
    if group is not None and all_runs:
        raise ConfigError("give --group ID or --all, not both")
    candidates = run_filter.keep(store.runs(**run_filter.store_args(), group_id=group, with_profiles=with_profiles))
    if not candidates:
        check_group(store, group)
        return [], nothing_matches(store, run_filter, group)
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
