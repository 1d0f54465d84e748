"""How long an invocation will take, said before it starts (docs/usage.md, "Estimates").

Every command that runs more than :data:`SAY_ABOVE_S` (``run`` over a thread list, ``gate``,
``compare`` and the release comparison, ``ci run`` through its plan, a ``pytest scenarios/`` session of
more than one case) prints one line before its first run: the expected wall time, and where each figure
comes from. The parts:

* **runs**: each run is priced by this machine's recent runs of the same server, scenario, kind and
  thread count (timing runs: of the same warm-up and duration), read from the store: the lower median
  of the newest :data:`RECENT` runs' wall time. A stored run's time runs from the start of its server
  (a cost run's under callgrind, with its prewarm) to its result, so server start, restore, warm-up and
  the measured window are all in it; the lower median keeps a first run that also prepared its dataset
  from inflating the price. Then the gap to the next run (storing, reporting), measured from the
  stored runs of one invocation. With nothing stored, the profile's warm-up + duration and an assumed
  server start (timing), or the events at the instructions the scenario's committed cost baseline says
  its transactions execute (cost, :mod:`harness.pipeline.cost_price`): "assumed".
  An A/B comparison's cost runs go side by side (:mod:`harness.measure.cost_slots`): their wall time
  is their sum over the slot count the runner will use (the line says it). A stored run's time is its
  own span, whether it ran alone or beside another, so it is divided once, here.
* **datasets**: a dataset not in the snapshot cache is prepared once; priced by the time this machine
  took for the same dataset shape before (the snapshot's ``build_s``, kept in its ``meta.json``), else
  assumed from the row count.
* **overhead**: the session (sweep, fingerprint, store, reports) and, per A/B comparison, the
  query-plan check: measured from this runner's recent invocations (:mod:`harness.pipeline.overhead`),
  else assumed and scaled by how much slower than assumed this machine's recent runs were.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import itertools
import json
import os
import platform
import statistics
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.config.settings import Settings
from harness.dataset import snapshot_key
from harness.errors import HarnessError
from harness.measure.cost_slots import slots_for
from harness.measure.provision import readable_setups
from harness.measure.session import Session
from harness.model import Kind, RunKind, Scenario, Server, stable_hash
from harness.model.time_estimate import DatasetEstimate, KindEstimate, PlanEstimate, duration
from harness.pipeline.ab import ComparisonSpec
from harness.pipeline.cases import Case, kind_threads
from harness.pipeline.design_check import seconds_per_run
from harness.pipeline.overhead import measured, shape
from harness.store import is_lake, open_store

#: How many of the newest matching runs price a run (their lower median wall time): few, as a shared
#: machine's load changes within the hour and run times follow it (a cost run: 13 s at one load, 29 s at another).
RECENT = 5
#: How many of the newest runs give the gap between runs.
RECENT_GAPS = 60
#: Between two runs: storing the first (DuckDB and Parquet) and reporting it.
GAP_S = 2.0
#: Assumed server start (fresh from the dataset snapshot) when no run of it is stored, by provider.
ASSUMED_START_S = {"local": 1.5, "container": 6.0, "external": 0.0}
#: The most the fixed overheads are scaled up by on a machine whose recent runs were slower than assumed.
MAX_SLOWDOWN = 4.0
#: A gap between two runs of one invocation longer than this is something else (a plan check, a dataset).
MAX_GAP_S = 60.0
#: A dataset with no preparation of its shape timed here: a fresh server and its system tables, then
#: sysbench's rows at this rate (a 2-core VM under load: 2 x 10,000 rows in about 8 s).
ASSUMED_INIT_S = {"local": 6.0, "container": 15.0, "external": 5.0}
ASSUMED_ROWS_PER_S = 40_000.0
#: Commands shorter than this print no estimate.
SAY_ABOVE_S = 60.0

Durations = dict[tuple[str, str, str, int], list[tuple[float, float, float]]]
"""(server, scenario, kind, threads) -> newest first: (warmup_s, time_s, seconds) of this machine's runs."""

#: Suffixes a pull-request plan gives its base and A/A sides (harness.ci.records); they price as the server.
SIDE_SUFFIXES = ("@base", "@aa", "(A/A)")


@dataclass(frozen=True)
class History:
    """This machine's recent runs: their durations, and the gaps between consecutive runs of one
    invocation, by the kind of the run that follows (a cost run's server starts under callgrind)."""

    durations: Durations = dataclasses.field(default_factory=dict)
    gaps: tuple[tuple[str, float], ...] = ()

    def gap_s(self, kind: RunKind) -> tuple[float, str]:
        """The time between two runs (storing one, starting the next): measured, or :data:`GAP_S`."""
        found = [gap for k, gap in self.gaps if k == kind]
        if len(found) >= 3:
            return statistics.median(found), "measured"
        return GAP_S, "assumed"


def bare(name: str) -> str:
    """A server or scenario name without the suffix a plan's side or an A/A head carries."""
    for suffix in SIDE_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


#: How long the estimate may wait to read the store's history: a lock another writer holds or a lake's
#: catalog that does not answer is the run's to wait for and announce, never the estimate's.
READ_LIMIT_S = 5.0


def recent_history(store: Path | str, hostname: str | None = None, limit_s: float = READ_LIMIT_S) -> History:
    """This machine's recent runs in ``store`` (empty when there is no store, it cannot be read, or it does
    not answer within ``limit_s``: the estimate then says "assumed")."""
    if not is_lake(store):
        if not Path(store).is_file() or _locked(Path(f"{store}.lock")):
            return History()
        try:
            return _history(open_store(store).durations(hostname or platform.node()))
        except (HarnessError, OSError):
            return History()
    found: list[list[dict[str, object]]] = []  # a lake: its catalog may not answer, so read it aside

    def read() -> None:
        with contextlib.suppress(HarnessError, OSError):
            found.append(open_store(store).durations(hostname or platform.node()))

    reader = threading.Thread(target=read, name="estimate-history", daemon=True)
    reader.start()
    reader.join(limit_s)
    return History() if reader.is_alive() or not found else _history(found[0])


def _locked(lock: Path) -> bool:
    """Whether another process holds the store file's lock now (the run waits for it, the estimate does not)."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the probe's lock
    return False


def _history(rows: list[dict[str, object]]) -> History:
    """Run durations and the gaps between runs of one invocation, from the store's rows."""
    out: Durations = {}
    spans: dict[str, list[tuple[float, float, str]]] = {}
    for index, r in enumerate(rows):
        kind = str(r["kind"] or "time")
        key = (bare(str(r["server"])), bare(str(r["scenario"])), kind, int(str(r["threads"])))
        seconds, started = r["seconds"], r["started"]
        if isinstance(seconds, int | float) and seconds > 0:
            out.setdefault(key, []).append((float(str(r["warmup_s"])), float(str(r["time_s"])), float(seconds)))
            if r["group_id"] and isinstance(started, int | float) and index < RECENT_GAPS:
                begin = float(started)
                spans.setdefault(str(r["group_id"]), []).append((begin, begin + float(seconds), kind))
    gaps: list[tuple[str, float]] = []
    for runs in spans.values():
        runs.sort()
        gaps += [(b[2], b[0] - a[1]) for a, b in itertools.pairwise(runs) if 0 <= b[0] - a[1] <= MAX_GAP_S]
    return History(out, tuple(gaps))


def assumed_run(server: Server, scenario: Scenario, kind: RunKind) -> float:
    """One run's wall time from the profile alone (an idle machine): warm-up + duration + server start, or
    the cost run's events at the instructions its transactions execute under callgrind (its family's)."""
    if kind == "cost":
        return float(seconds_per_run(scenario, "cost", server=server))
    return float(seconds_per_run(scenario, "time", start_s=ASSUMED_START_S.get(server.provider, 6.0)))


def per_run(
    durations: Durations, name: str, server: Server, scenario: Scenario, kind: RunKind, threads: int
) -> tuple[float, str]:
    """The wall time of one run of ``server`` (its runs stored as ``name``, a plan's side label or an A/B's
    base) without the gap to the next, and where the figure comes from ("measured (N runs)" or "assumed")."""
    found = durations.get((bare(name), bare(scenario.name), kind, threads), [])
    if kind == "time":  # a timing run's length follows its warm-up and duration: only the same ones count
        found = [f for f in found if f[0] == scenario.warmup_s and f[1] == scenario.time_s]
    seconds = [f[2] for f in found[:RECENT]]
    if seconds:
        return statistics.median_low(seconds), f"measured ({len(seconds)} runs)"
    return assumed_run(server, scenario, kind), "assumed"


def load_factor(items: Sequence[KindEstimate], assumed: Sequence[float]) -> float:
    """How much slower than assumed this machine's measured runs were (1 to :data:`MAX_SLOWDOWN`):
    the fixed overheads are an idle machine's, and a loaded one is slower at them too."""
    ratios = [i.per_run_s / a for i, a in zip(items, assumed, strict=True) if i.source != "assumed" and a > 0]
    return min(MAX_SLOWDOWN, max(1.0, statistics.median(ratios))) if ratios else 1.0


def _snapshot_meta(cache_dir: Path) -> list[dict[str, object]]:
    out = []
    for meta_path in sorted((cache_dir / "snapshots").glob("*/meta.json")):
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict):
            out.append({**meta, "folder": meta_path.parent.name})
    return out


def dataset_price(
    cache_dir: Path, server: Server, build_id: str, scenario: Scenario, sysbench_version: str, key: str = ""
) -> DatasetEstimate | None:
    """Preparing ``scenario``'s dataset for ``server``, or None when its snapshot is in the cache.

    ``key``: the snapshot's key when the server's setup resolved it (else built from ``build_id``).
    Priced by the time a snapshot of the same dataset shape and server flavour took to build here
    (its ``build_s``; any build of the server), else from the row count ("assumed")."""
    label = f"{server.flavour} {scenario.tables} x {scenario.table_size:,} rows ({scenario.script})"
    metas = _snapshot_meta(cache_dir)
    if server.provider != "external":
        key = key or stable_hash(snapshot_key(server, build_id, scenario, sysbench_version), 16)
        if any(m["folder"] == f"{server.flavour}-{key}" for m in metas):
            return None
    shape = scenario.dataset_key()
    timed = []
    for m in metas:
        parts, seconds = m.get("key_parts"), m.get("build_s")
        if isinstance(parts, dict) and isinstance(seconds, int | float) and parts.get("flavour") == server.flavour:
            timed += [float(seconds)] if parts.get("dataset") == shape else []
    if timed:
        return DatasetEstimate(label, statistics.median(timed), f"measured ({len(timed)} preparations)")
    rows = scenario.tables * scenario.table_size
    return DatasetEstimate(label, ASSUMED_INIT_S.get(server.provider, 6.0) + rows / ASSUMED_ROWS_PER_S, "assumed")


@dataclass(frozen=True)
class Work:
    """Runs an invocation will make: ``runs`` runs of ``case`` of ``kind`` at each of its thread counts."""

    case: Case
    kind: Kind
    runs: int
    label: str = ""
    like: str = ""  # a server whose runs price these when the case's own server has none (an A/B's base)
    slots: int = 1  # how many of these runs go at once (an A/B comparison's cost runs: side by side)


def estimate(
    settings: Settings,
    work: Sequence[Work],
    history: History,
    *,
    comparisons: int = 0,
    sysbench_version: str = "",
    build_id: dict[str, str] | None = None,
    snapshot_keys: Mapping[tuple[str, str], str] | None = None,
) -> PlanEstimate:
    """The expected wall time of ``work``, priced by ``history`` (see the module doc).

    ``build_id`` (server name -> the provider's build identity, the dataset snapshot's key) tells which
    datasets are cached; without it (or without ``sysbench_version``) datasets are left out.
    ``snapshot_keys`` ((server name, scenario name) -> the snapshot key the session's server setup
    resolved) is used instead of rebuilding a key from ``build_id``."""
    items: list[KindEstimate] = []
    assumed: list[float] = []
    datasets: dict[str, DatasetEstimate] = {}
    for w in work:
        scenario, server = w.case.scenario, w.case.server
        if w.kind == "cost" and server.provider == "external":
            continue
        for threads in kind_threads(scenario, w.kind):
            seconds, source = per_run(history.durations, server.name, server, scenario, w.kind, threads)
            if source == "assumed" and w.like:
                seconds, source = per_run(history.durations, w.like, server, scenario, w.kind, threads)
            label = f"{w.label or server.name} {scenario.name} {threads}t"
            per = seconds + history.gap_s(w.kind)[0]
            items.append(KindEstimate(label, w.kind, w.runs, per, source, w.slots))
            assumed.append(assumed_run(server, scenario, w.kind))
        if build_id is not None and sysbench_version and server.name in build_id:
            key = (snapshot_keys or {}).get((server.name, scenario.name), "")
            found = dataset_price(settings.cache_dir, server, build_id[server.name], scenario, sysbench_version, key)
            if found is not None:
                datasets.setdefault(f"{server.name} {found.label}", found)
    overhead, source = overhead_price(settings, comparisons, items, assumed) if items else (0.0, "assumed")
    return PlanEstimate(tuple(items), overhead, datasets=tuple(datasets.values()), overhead_source=source)


def overhead_price(
    settings: Settings, comparisons: int, items: Sequence[KindEstimate], assumed: Sequence[float]
) -> tuple[float, str]:
    """The invocation's time before its first run and after its last (:mod:`harness.pipeline.overhead`):
    measured on this runner, else the assumed shape scaled by :func:`load_factor`."""
    found = measured(settings.cache_dir)
    if found.measured:
        return found.seconds(comparisons), found.source
    return shape(comparisons) * load_factor(items, assumed), "assumed"


def line(found: PlanEstimate) -> str:
    """``estimate: about 12 min in all (30 run(s), 3 of 4 run figures measured on this machine, 1 assumed
    from the profile; 1 dataset(s) to prepare, about 2 min (measured); session and plan checks 20 s)``."""
    total = len(found.items)
    measured = found.measured
    sources = (
        "all measured on this machine"
        if measured == total
        else "none measured on this machine yet: assumed from the profile"
        if not measured
        else f"{measured} of {total} run figures measured on this machine, {total - measured} assumed from the profile"
    )
    parts = [f"{found.runs} run(s), {sources}"]
    if found.cost_slots > 1:
        parts.append(f"cost runs {found.cost_slots} at a time")
    if found.datasets:
        how = "measured" if all(d.source != "assumed" for d in found.datasets) else "assumed"
        if how == "assumed" and any(d.source != "assumed" for d in found.datasets):
            how = "partly assumed"
        parts.append(f"{len(found.datasets)} dataset(s) to prepare, about {duration(found.datasets_s)[1:]} ({how})")
    if found.overhead_s:
        how = "measured" if found.overhead_source != "assumed" else "assumed"
        parts.append(f"session and plan checks {duration(found.overhead_s)[1:]} ({how})")
    return f"estimate: about {duration(found.seconds)[1:]} in all ({'; '.join(parts)})"


def of_work(
    settings: Settings,
    work: Sequence[Work],
    history: History,
    *,
    comparisons: int = 0,
    session: Session | None = None,
) -> PlanEstimate:
    """:func:`estimate` with the datasets found in the cache: sysbench's version and each server's setup (its
    build and snapshot key) from the ``session`` when there is one (resolved once there, and used again by
    the runs), else resolved here the same way (:func:`harness.measure.provision.readable_setups`); a
    server whose setup cannot be read is left out of the datasets."""
    if session is not None:
        version = session.sysbench_version
    else:
        from harness.sysbench.driver import check_version

        try:
            version = check_version()
        except (HarnessError, OSError):
            version = ""
    cases = [(w.case.server, w.case.scenario) for w in work]
    setups = readable_setups(cases, version, session.setup if session else None) if version else {}
    return estimate(
        settings,
        work,
        history,
        comparisons=comparisons,
        sysbench_version=version,
        build_id={server: setup.build_id for (server, _), setup in setups.items()},
        snapshot_keys={key: setup.snapshot_key for key, setup in setups.items()},
    )


def of_cases(settings: Settings, cases: Sequence[Case], kinds: Sequence[Kind]) -> list[Work]:
    """The runs of every case and kind as the profile (or the settings) set their repetitions."""
    from harness.pipeline.cases import for_kind

    out = []
    for case in cases:
        for kind in kinds:
            c = for_kind(settings, case, kind)
            out.append(Work(c, kind, c.scenario.repetitions if kind == "time" else c.scenario.cost.repetitions))
    return out


def of_specs(specs: Sequence[ComparisonSpec], kinds: Sequence[Kind], pairs: int) -> list[Work]:
    """The runs of A/B comparisons: ``pairs`` timing pairs, the scenario's cost pairs, both sides; the head
    priced like the base where it has no runs of its own (a ``--head-var`` head is the base's build). A
    comparison's cost runs go side by side as :func:`harness.measure.cost_slots.run_side_by_side` runs
    them, each slot taking the next run: their wall time is their sum over the slots."""
    out = []
    for s in specs:
        reps = s.scenario.cost.repetitions
        side_by_side = slots_for(2 * reps * len(s.scenario.cost.threads))  # a comparison's cost runs: one batch
        for side in (s.base, s.head):
            for kind in (k for k in kinds if s.runs(k, kinds)):
                runs, slots = (pairs, 1) if kind == "time" else (reps, side_by_side)
                out.append(Work(Case(side, s.scenario), kind, runs, like=s.base.name, slots=slots))
    return out


def say(phase: Callable[[str], None], found: PlanEstimate) -> None:
    """Say the estimate before anything runs, when it is over :data:`SAY_ABOVE_S`."""
    if found.seconds >= SAY_ABOVE_S:
        phase(line(found))
