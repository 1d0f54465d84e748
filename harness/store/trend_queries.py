"""Queries over stored runs for trends: per-commit points, per-version spreads and scaling curves.

All aggregation happens in DuckDB over a metrics table (:meth:`harness.store.Store.metrics_table`),
never row by row in Python:

* **points**: one per scenario x server x threads x testbed x *commit* (the run's ``git_sha``; runs
  without one are grouped by UTC day), at the time of its first run: the median and the min-max range
  of the repetitions for QPS and p95, with the server versions, config hashes and commits behind it
  for the tooltips.
* **versions**: one per scenario x server x threads x testbed x server version: quartiles and range.
* **scaling**: one per scenario x server x config x testbed x threads, over the runs of the newest
  server version of that server and config: QPS and p95 against thread count.

Runs of a configuration that is not the committed one (their notes say ``one-off: <variables>``, from
``dbperf compare --head-var``, or ``uncommitted tree``: see :func:`harness.model.history.one_off_label`)
never join the main series: every table has a ``oneoff`` column ("" for the committed configuration)
that is part of every series' key, a ``--head-var`` server's runs are filed under the server they
modify, and their ``line`` names what sets them apart (``mariadb-local · one-off: ...``).

Machines never mix: runs of different testbeds (hardware fingerprints, e.g. the runner classes of a
fleet writing one shared store) are separate series, each with a readable ``testbed`` label. Every
table has a ``line`` column, what a chart colours by: the server alone while all runs come from one
testbed, else ``server · testbed``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from harness.errors import ConfigError
from harness.model import METRICS
from harness.model.history import ONE_OFF, one_off_label
from harness.model.metrics import TREND_METRICS


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """A natural sort key: ``9.7.0`` < ``10.11.6`` < ``11.8.1``."""
    parts = re.findall(r"\d+|[^\d]+", version)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def _check_metrics(metrics: Sequence[str]) -> None:
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ConfigError(f"unknown metric {', '.join(unknown)}: choose from {', '.join(METRICS)}")


_CPU_NOISE = re.compile(r"\((?:R|TM|tm|r)\)|\b(?:CPU|Processor|\d+-Core)\b|@\s*[\d.]+\s*GHz", re.IGNORECASE)


def testbed_label(cpu_model: str | None, cores: int | None, fingerprint: str | None, hardware_class: str | None) -> str:
    """A short, unique name for a testbed: ``AMD EPYC 7763 x16 (1a2b3c)``, or its hardware class
    when it has one: ``epyc-16 (1a2b3c)``."""
    short = (fingerprint or "unknown")[:6]
    if hardware_class:
        return f"{hardware_class} ({short})"
    cpu = " ".join(_CPU_NOISE.sub(" ", cpu_model or "").split()) or "unknown CPU"
    return f"{cpu} x{cores or '?'} ({short})"


def with_one_off(table: pa.Table) -> pa.Table:
    """The metrics table with a ``oneoff`` column (what sets a run apart from its series, "" for none),
    a ``--head-var`` run's ``server`` set back to the server its variables modify, a base side's scenario
    or server (``S@base``, ``T@base``: what ``dbperf ci`` loads from the base tree) filed under its own
    name with ``@base ...`` in ``oneoff``, and a ``loaded`` column: the run's load warning, or ""."""
    if "oneoff" in table.column_names:
        return table
    if "notes" not in table.column_names or table.num_rows == 0:
        empty = pa.array([""] * table.num_rows, pa.string())
        return _base_sides(table.append_column("oneoff", empty).append_column("loaded", empty))
    notes = pc.dictionary_encode(pc.fill_null(table.column("notes").combine_chunks(), ""))
    distinct = [one_off_label(note) for note in notes.dictionary.to_pylist()]  # few distinct notes: each once
    oneoff = pa.array(distinct, pa.string()).take(notes.indices)
    loaded = pa.array([load_note(note) for note in notes.dictionary.to_pylist()], pa.string()).take(notes.indices)
    if any(label.startswith(f"{ONE_OFF}: ") or f" · {ONE_OFF}: " in label for label in distinct):
        servers = table.column("server").to_pylist()
        named = [_modified(server, label) for server, label in zip(servers, oneoff.to_pylist(), strict=True)]
        table = table.set_column(table.column_names.index("server"), "server", pa.array(named, pa.string()))
    return _base_sides(table.append_column("oneoff", oneoff).append_column("loaded", loaded))


#: A name loaded from a pull request's base tree (harness.ci.records.BASE_SUFFIX).
BASE_SIDE = "@base"
_BASE_LABELS = {"scenario": "@base (the base tree's scenario)", "server": "@base (the base tree's server)"}
#: The warnings about a busy machine a run keeps in its notes (harness.testbed.preflight; other dbperf runs
#: measuring on the same CPUs, harness.measure.neighbours).
_LOAD = re.compile(r"^(?:load average [\d.]+ on|CPU steal time|CPU \d+ % busy before|other dbperf runs \()")


def load_note(notes: str | None) -> str:
    """The run's warnings about a busy machine (load average, steal, a busy CPU), joined, or ""."""
    try:
        loaded = json.loads(notes or "[]")
    except ValueError:
        return ""
    found = [str(n) for n in loaded if _LOAD.match(str(n))] if isinstance(loaded, list) else []
    return "; ".join(found)


def _base_sides(table: pa.Table) -> pa.Table:
    """``S@base`` and ``T@base`` filed under ``S`` and ``T``, drawn apart with their ``@base`` label, so a
    changed scenario or server is drawn with its base side in the same charts."""
    oneoff = table.column("oneoff").to_pylist()
    changed = False
    for column in ("scenario", "server"):
        if column not in table.column_names:
            continue
        names = table.column(column).to_pylist()
        if not any(str(n or "").endswith(BASE_SIDE) for n in names):
            continue
        changed = True
        for i, name in enumerate(names):
            if name and name.endswith(BASE_SIDE):
                names[i] = name.removesuffix(BASE_SIDE)
                oneoff[i] = " · ".join(x for x in (oneoff[i], _BASE_LABELS[column]) if x)
        table = table.set_column(table.column_names.index(column), column, pa.array(names, pa.string()))
    if not changed:
        return table
    return table.set_column(table.column_names.index("oneoff"), "oneoff", pa.array(oneoff, pa.string()))


def _modified(server: str | None, label: str) -> str | None:
    """The server a ``--head-var`` server modifies: ``mariadb-local`` for ``mariadb-local+a=1`` (also
    when the trend command has added `` [profile]``), else ``server``."""
    if not server or not label:
        return server
    for part in label.split(" · "):
        if part.startswith(f"{ONE_OFF}: "):
            suffix = "+" + part.removeprefix(f"{ONE_OFF}: ")
            at = server.rfind(suffix)
            rest = server[at + len(suffix) :]
            if at > 0 and (not rest or (rest.startswith(" [") and rest.endswith("]"))):
                return server[:at] + rest
    return server


def committed(points: pa.Table) -> pa.Table:
    """The rows of the committed configuration only: the series change points are looked for in."""
    if "oneoff" not in points.column_names:
        return points
    return points.filter(pc.equal(pc.fill_null(points.column("oneoff"), ""), ""))


def _connect(table: pa.Table) -> duckdb.DuckDBPyConnection:
    """A connection with ``runs`` (the metrics table plus ``oneoff``, ``testbed`` and ``several``,
    whether the ok runs come from more than one testbed)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.register("_metrics", with_one_off(table))
    beds = con.execute(
        "SELECT DISTINCT testbed_fingerprint, testbed_cpu_model, testbed_cores, testbed_class "
        "FROM _metrics WHERE status = 'ok'"
    ).fetchall()
    labels = {fp: testbed_label(cpu, cores, fp, cls) for fp, cpu, cores, cls in beds}
    con.register(
        "_testbeds",
        pa.table(
            {
                "testbed_fingerprint": pa.array(list(labels), pa.string()),
                "testbed": pa.array(list(labels.values()), pa.string()),
            }
        ),
    )
    several = "TRUE" if len(labels) > 1 else "FALSE"
    con.execute(
        f"CREATE TEMP VIEW runs AS SELECT m.*, coalesce(t.testbed, 'unknown testbed') AS testbed, "
        f"{several} AS several FROM _metrics m LEFT JOIN _testbeds t USING (testbed_fingerprint)"
    )
    return con


#: The colour key of points and versions: the server, with the testbed when there are several, and
#: what sets a one-off configuration apart.
_LINE = (
    "CASE WHEN any_value(several) THEN server || ' · ' || testbed ELSE server END"
    " || CASE WHEN oneoff <> '' THEN ' · ' || oneoff ELSE '' END"
)


def _stats(metric: str, *, quartiles: bool) -> str:
    cols = [
        f'median("{metric}") AS "{metric}"',
        f'min("{metric}") AS "{metric}_min"',
        f'max("{metric}") AS "{metric}_max"',
    ]
    if quartiles:
        cols += [
            f'quantile_cont("{metric}", 0.25) AS "{metric}_q1"',
            f'quantile_cont("{metric}", 0.75) AS "{metric}_q3"',
        ]
    return ", ".join(cols)


#: How many of a point's runs were measured under load, and the first such run's warning (the charts ring them).
_LOADED = (
    "count(*) FILTER (WHERE loaded <> '') AS loaded_n, "
    "coalesce(min(loaded) FILTER (WHERE loaded <> ''), '') AS load_note"
)
_POINT_KEY = "coalesce(nullif(git_sha, ''), strftime(started_at, '%Y-%m-%d'))"
_ISO = "'%Y-%m-%dT%H:%M:%SZ'"


def commit_points(table: pa.Table, metrics: Sequence[str] = TREND_METRICS) -> pa.Table:
    """Per scenario x server x threads x testbed x commit: medians and ranges, ordered by series then time.

    Adds ``series`` (a number per scenario x server x threads x testbed, in order) so callers can cut
    the sorted table into series without grouping in Python.
    """
    _check_metrics(metrics)
    stats = ", ".join(_stats(m, quartiles=False) for m in metrics)
    con = _connect(table)
    try:
        return con.sql(
            f"""
            SELECT scenario, server, threads, testbed, oneoff, {_LINE} AS line, {_POINT_KEY} AS point,
                   strftime(min(started_at), {_ISO}) AS at, count(*) AS n, {stats},
                   string_agg(DISTINCT server_version, ', ' ORDER BY server_version) AS versions,
                   string_agg(DISTINCT config_hash, ', ' ORDER BY config_hash) AS configs,
                   any_value(testbed_fingerprint) AS testbeds, {_LOADED},
                   dense_rank() OVER (ORDER BY scenario, server, threads, testbed_fingerprint, oneoff) - 1 AS series
            FROM runs WHERE status = 'ok'
            GROUP BY scenario, server, threads, testbed_fingerprint, testbed, oneoff, point
            ORDER BY scenario, server, threads, testbed, oneoff, min(started_at), point
            """
        ).to_arrow_table()
    finally:
        con.close()


def _versions(con: duckdb.DuckDBPyConnection) -> pa.Table:
    stats = ", ".join(_stats(m, quartiles=True) for m in TREND_METRICS)
    return con.sql(
        f"""
        SELECT scenario, server, threads, testbed, oneoff, {_LINE} AS line,
               coalesce(nullif(server_version, ''), '?') AS server_version,
               count(*) AS n, count(DISTINCT {_POINT_KEY}) AS commits, {stats},
               string_agg(DISTINCT config_hash, ', ' ORDER BY config_hash) AS configs,
               any_value(testbed_fingerprint) AS testbeds, {_LOADED},
               strftime(min(started_at), {_ISO}) AS first_at, strftime(max(started_at), {_ISO}) AS last_at
        FROM runs WHERE status = 'ok'
        GROUP BY scenario, server, threads, testbed_fingerprint, testbed, oneoff, 7
        ORDER BY scenario, server, threads, server_version, testbed, oneoff
        """
    ).to_arrow_table()


def _scaling(con: duckdb.DuckDBPyConnection) -> pa.Table:
    stats = ", ".join(_stats(m, quartiles=True) for m in TREND_METRICS)
    return con.sql(
        f"""
        WITH ok AS (SELECT * FROM runs WHERE status = 'ok'),
        latest AS (
            SELECT scenario, server, oneoff, config_hash, arg_max(server_version, started_at) AS server_version
            FROM ok GROUP BY ALL
        ),
        agg AS (
            SELECT scenario, server, oneoff, config_hash, server_version, testbed, threads, count(*) AS n,
                   count(DISTINCT {_POINT_KEY}) AS commits, {stats},
                   any_value(testbed_fingerprint) AS testbeds, any_value(several) AS several
            FROM ok JOIN latest USING (scenario, server, oneoff, config_hash, server_version)
            GROUP BY scenario, server, oneoff, config_hash, server_version, testbed_fingerprint, testbed, threads
        )
        SELECT * EXCLUDE (several),
               CASE WHEN count(DISTINCT config_hash) OVER (PARTITION BY scenario, server, oneoff) > 1
                    THEN server || ' · ' || left(config_hash, 8) ELSE server END
               || CASE WHEN several THEN ' · ' || testbed ELSE '' END
               || CASE WHEN oneoff <> '' THEN ' · ' || oneoff ELSE '' END AS line
        FROM agg ORDER BY scenario, oneoff <> '', line, threads
        """
    ).to_arrow_table()


def _time_extents(points: pa.Table) -> dict[str, list[int]]:
    """``scenario|server|threads`` (and ``scenario|all|threads``) -> [first, last] commit time in ms.

    The trend charts take their time axis from this (a Vega-Lite param) rather than from a union of
    the layers' data, which would warn about an empty extent whenever a selection has no change point.
    """
    con = duckdb.connect()
    try:
        con.register("points", points.select(["scenario", "server", "threads", "at"]))
        rows = con.sql(
            """
            WITH p AS (SELECT scenario, server, threads, epoch_ms(CAST("at" AS TIMESTAMPTZ)) AS ms FROM points)
            SELECT scenario || '|' || server || '|' || threads AS key, min(ms), max(ms) FROM p GROUP BY ALL
            UNION ALL
            SELECT scenario || '|all|' || threads, min(ms), max(ms) FROM p GROUP BY scenario, threads
            """
        ).fetchall()
    finally:
        con.close()
    half_day = 12 * 3600 * 1000
    return {  # some room on either side, so the first and last commits do not sit on the frame
        str(key): [int(lo - (hi - lo) * 0.03), int(hi + (hi - lo) * 0.03)]
        if hi > lo
        else [int(lo) - half_day, int(hi) + half_day]
        for key, lo, hi in rows
    }


def history_tables(table: pa.Table) -> tuple[int, pa.Table, pa.Table, pa.Table, dict[str, list[int]]]:
    """(ok runs, points, versions, scaling, time extents) of a metrics table.

    Instructions per transaction are charted from cost runs only: a timing run's count (perf, where
    counters work) covers the whole server process and is another number.
    """
    if table.num_rows and "instr_per_txn" in table.column_names and "kind" in table.column_names:
        cost = pc.equal(pc.fill_null(table.column("kind"), ""), "cost")
        instr = pc.if_else(cost, table.column("instr_per_txn"), pa.scalar(None, pa.float64()))
        table = table.set_column(table.column_names.index("instr_per_txn"), "instr_per_txn", instr)
    table = with_one_off(table)  # once, for the points, versions and scaling alike
    ok_runs = int(pc.sum(pc.equal(table.column("status"), "ok")).as_py() or 0) if table.num_rows else 0
    if ok_runs == 0:
        return 0, table.slice(0, 0), table.slice(0, 0), table.slice(0, 0), {}
    points = commit_points(table)
    con = _connect(table)
    try:
        versions = _versions(con)
        scaling = _scaling(con)
    finally:
        con.close()
    order = sorted(set(versions.column("server_version").to_pylist()), key=version_key)
    rank = {v: i for i, v in enumerate(order)}
    ranks = pa.array([rank[v] for v in versions.column("server_version").to_pylist()], pa.int32())
    versions = versions.append_column("version_rank", ranks).sort_by(
        [("version_rank", "ascending"), ("scenario", "ascending"), ("server", "ascending"), ("threads", "ascending")]
    )
    return ok_runs, points, versions, scaling, _time_extents(points)


SERIES_KEY: tuple[str, ...] = ("server", "scenario", "profile", "kind")
"""What separates stored series besides the thread count: profiles and kinds never mix."""


def series_keys(table: pa.Table) -> list[dict[str, str]]:
    """The distinct server x scenario x profile x kind combinations of a metrics table, sorted."""
    if table.num_rows == 0:
        return []
    keys = table.select(list(SERIES_KEY)).group_by(list(SERIES_KEY)).aggregate([]).to_pylist()
    return sorted(({k: str(row[k] or "") for k in SERIES_KEY} for row in keys), key=lambda r: tuple(r.values()))


def one_series(table: pa.Table, key: dict[str, str]) -> pa.Table:
    """The rows of a metrics table that belong to one :func:`series_keys` combination."""
    mask = None
    for column, value in key.items():
        this = pc.equal(pc.fill_null(table.column(column), ""), value)
        mask = this if mask is None else pc.and_(mask, this)
    return table.filter(mask) if mask is not None else table
