"""The dataset stage: prepare once, snapshot the stopped server's datadir, restore a copy per run.

It loads every row a run starts from: a snapshot's, on a server started here for it (initialised, served,
prepared by sysbench, stopped), and an external server's tables, prepared in place once per invocation.
``measure/provision.py`` asks for a restored copy (:meth:`DatasetCache.restored`) and starts the run's
server on it; nothing calls back into it (docs/provisioning.md).

Preparing rows takes far longer than copying the datadir they end up in, so a dataset is prepared once per
(server build, dataset shape, script, sysbench version, datadir-shaping variables) and every repetition starts
from a fresh copy. Writes never leak from one repetition into the next, and purge lag never carries over.

Snapshots live in ``<cache>/snapshots/<flavour>-<key>/`` with ``datadir/`` and ``meta.json`` (the
key's parts, the benchmark account, the prepare time). A snapshot is complete only once
``meta.json`` exists (written last, after an atomic rename), and creation holds a file lock so two
processes never prepare the same key at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness import workspace
from harness.config.scenarios import DATASET_LOADER
from harness.errors import HarnessError, ServerError
from harness.model import Scenario, Server, stable_hash
from harness.servers.provider import DatasetCredentials, Launch, Provider, ServerInstance, run_sql
from harness.sysbench.driver import prepare
from harness.workspace import child_environment

#: Server variables that change what a prepared datadir contains (so they belong in the key).
DATADIR_SHAPING = (
    "innodb_page_size",
    "lower_case_table_names",
    "innodb_data_file_path",
    "character_set_server",
    "collation_server",
    "innodb_file_per_table",
    "innodb_default_row_format",
    "innodb_checksum_algorithm",
    "innodb_compression_default",
)


@dataclass(frozen=True)
class Snapshot:
    """A prepared, stopped datadir and the account to use on it."""

    key: str
    datadir: Path
    credentials: DatasetCredentials
    prepare_s: float
    key_parts: dict[str, object]


@dataclass(frozen=True)
class DatasetSpec:
    """What a snapshot is made from, as the setup resolved it (``measure/provision.py``): the server's
    provider and variables, the scenario, the snapshot's key parts and the redo log's configured size in
    bytes (0: the server's default), which sizes the space check."""

    provider: Provider
    scenario: Scenario
    variables: Mapping[str, str]
    parts: Mapping[str, object]
    redo_log_bytes: int = 0


def snapshot_key(server: Server, build_id: str, scenario: Scenario, sysbench_version: str) -> dict[str, object]:
    shaping = {k: v for k, v in sorted(server.variables.items()) if k in DATADIR_SHAPING}
    return {
        "flavour": server.flavour,
        "build": build_id,
        "dataset": scenario.dataset_key(),
        "sysbench": sysbench_version,
        "shaping": shaping,
        "format": 1,
        "loader": DATASET_LOADER,
    }


def _mb(size: float) -> str:
    return f"{size / 2**20:,.0f} MB"


def folder_bytes(folder: Path) -> int:
    """Disk space a folder takes (allocated blocks, so sparse files count as they are)."""
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            total += path.lstat().st_blocks * 512
    return total


def snapshot_bytes(redo_log_bytes: int, scenario: Scenario) -> int:
    """About how much disk a prepared snapshot takes: InnoDB's redo log, system files, and the rows.

    The redo log's configured size (100 MB when the server sets none), 40 MB of system tablespace and
    tables, and 1,100 bytes per row with sysbench's secondary index (a margin over what was measured).
    """
    return (redo_log_bytes or 100 * 2**20) + 40 * 2**20 + scenario.tables * scenario.table_size * 1100


def _check_space(root: Path, need: int, scenario: Scenario, server: Server, *, failed: str = "") -> None:
    """Refuse (before preparing) or explain (after a failed build) a cache disk too small for the snapshot."""
    available = shutil.disk_usage(root).free
    if available >= need and not failed:
        return
    when = f" when preparing failed (the server said: {failed[:160]})" if failed else ""
    raise ServerError(
        f"no space left on device for a dataset snapshot in {root}: {_mb(available)} free{when}, and "
        f"{scenario.tables} x {scenario.table_size:,} rows for {server.flavour} need about {_mb(need)} "
        "(InnoDB's redo log included); free space there or point --cache-dir (DBPERF_CACHE_DIR) at a larger disk"
    )


def _out_of_space(root: Path, need: int, exc: BaseException) -> bool:
    """Whether a failed build ran out of disk (the server's own message rarely says so)."""
    text = str(exc)
    if "No space left" in text or "Errno 28" in text:
        return True
    try:
        return shutil.disk_usage(root).free < min(need // 10, 64 * 2**20)
    except OSError:
        return False


def copy_datadir(source: Path, destination: Path) -> float:
    """Copy a datadir (reflinks where the filesystem has them); returns seconds."""
    started = time.monotonic()
    result = subprocess.run(
        ["cp", "-a", "--reflink=auto", str(source), str(destination)],
        capture_output=True,
        text=True,
        check=False,
        env=child_environment(),
    )
    if result.returncode != 0:
        raise ServerError(f"copying datadir {source} failed: {result.stderr.strip()}; is the disk full?")
    return time.monotonic() - started


class DamagedSnapshotError(HarnessError):
    """A snapshot in the cache whose files no longer match what was written (internal: it is rebuilt)."""


#: Snapshots whose checksums this process has verified (sizes are checked at every use, checksums once).
_VERIFIED: set[str] = set()


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, lambda: hashlib.blake2b(digest_size=16)).hexdigest()


def manifest(datadir: Path) -> dict[str, list[int | str]]:
    """Every file of a stopped server's datadir: relative path -> [size, blake2b checksum]."""
    return {
        str(f.relative_to(datadir)): [f.stat().st_size, _digest(f)]
        for f in sorted(datadir.rglob("*"))
        if f.is_file() and not f.is_symlink()
    }


def _verify(datadir: Path, files: dict[str, tuple[int, str]], *, full: bool) -> None:
    """Raise :class:`DamagedSnapshotError` when a file is missing, resized or (``full``) changed."""
    for name, (size, digest) in files.items():
        path = datadir / name
        try:
            actual = path.stat().st_size
        except OSError:
            raise DamagedSnapshotError(f"{name} is missing") from None
        if actual != size:
            raise DamagedSnapshotError(f"{name} is {actual:,} bytes, {size:,} when it was made")
        if full and _digest(path) != digest:
            raise DamagedSnapshotError(f"{name} has changed since it was made (checksum)")


class DatasetCache:
    """Prepared datadir snapshots under one cache folder, and what one invocation has looked up there
    (snapshots by folder name, external servers' tables prepared, look-up and build times)."""

    def __init__(self, cache_dir: Path) -> None:
        self.root = cache_dir / "snapshots"
        self.found: dict[str, Snapshot] = {}
        self.external: set[tuple[str, str]] = set()
        self.prepared: list[tuple[float, float]] = []  # snapshot look-ups and builds (epoch s)

    def _load(self, folder: Path, *, verify: bool = True) -> Snapshot | None:
        """The snapshot in ``folder``; None when there is none; :class:`DamagedSnapshotError` when it is damaged."""
        meta_path = folder / "meta.json"
        if not meta_path.is_file() or not (folder / "datadir").is_dir():
            return None
        try:
            meta = json.loads(meta_path.read_text())
            snapshot = Snapshot(
                key=meta["key"],
                datadir=folder / "datadir",
                credentials=DatasetCredentials(meta["user"], meta["password"]),
                prepare_s=float(meta["prepare_s"]),
                key_parts=meta["key_parts"],
            )
            files = {str(k): (int(v[0]), str(v[1])) for k, v in meta["files"].items()}
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise DamagedSnapshotError(f"its meta.json cannot be read ({type(exc).__name__}: {exc})") from exc
        if verify:
            _verify(snapshot.datadir, files, full=snapshot.key not in _VERIFIED)
            _VERIFIED.add(snapshot.key)
        return snapshot

    def snapshot(self, spec: DatasetSpec, *, say: Callable[[str], None] = lambda _msg: None) -> Snapshot:
        """The snapshot keyed by ``spec.parts`` (:func:`snapshot_key`), built once if the cache lacks it
        (:meth:`_build`); looked up once per invocation and cache (each look-up and build timed in
        ``prepared``)."""
        name = f"{spec.provider.server.flavour}-{stable_hash(dict(spec.parts), 16)}"
        found = self.found.get(name)
        if found is None:
            begun = time.time()
            found = self.found[name] = self._ensure(spec, say)
            self.prepared.append((begun, time.time()))
        return found

    @contextmanager
    def restored(
        self, spec: DatasetSpec, *, say: Callable[[str], None] = lambda _msg: None
    ) -> Iterator[tuple[Path, Snapshot]]:
        """A private copy of the snapshot's datadir, and the snapshot (for its account): the snapshot built
        first if the cache lacks it; the copy removed on leaving."""
        snapshot = self.snapshot(spec, say=say)
        with self.restore(snapshot) as copy:
            yield copy, snapshot

    def fill_external(
        self, instance: ServerInstance, scenario: Scenario, server: str, say: Callable[[str], None]
    ) -> None:
        """An external server's tables (it has no snapshot of ours), dropped and prepared once per invocation."""
        key = (server, stable_hash(scenario.dataset_key()))
        if key in self.external:
            return
        say(f"preparing {scenario.tables} x {scenario.table_size:,} rows on {server}")
        database = instance.endpoint.database.replace("`", "``")
        run_sql(
            instance.endpoint,
            [f"DROP TABLE IF EXISTS `{database}`.`{table}`" for table in scenario.created_tables],
        )
        prepare(scenario, instance.endpoint, threads=2)
        self.external.add(key)

    def _ensure(self, spec: DatasetSpec, say: Callable[[str], None]) -> Snapshot:
        """The snapshot in the cache, or built (under the cache's lock for its key) when it is missing or damaged."""
        server, scenario, parts = spec.provider.server, spec.scenario, dict(spec.parts)
        key = stable_hash(parts, 16)
        folder = self.root / f"{server.flavour}-{key}"
        self.root.mkdir(parents=True, exist_ok=True)
        lock_path = self.root / f"{key}.lock"
        with lock_path.open("w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                say(
                    f"waiting for another dbperf process that is preparing the same dataset "
                    f"({scenario.tables} x {scenario.table_size:,} rows for {server.flavour}; lock {lock_path})"
                )
                fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                existing = self._load(folder)
            except DamagedSnapshotError as exc:
                say(f"warning: the dataset snapshot {folder} is damaged: {exc}; preparing it again")
                existing = None
            if existing is not None:
                return existing
            return self._build(spec, key, folder, say)

    def _build(self, spec: DatasetSpec, key: str, folder: Path, say: Callable[[str], None]) -> Snapshot:
        """A new snapshot: a datadir initialised, served on a server started for it, its tables prepared by
        sysbench, the server stopped and the datadir kept (caller holds the key's lock)."""
        provider, scenario, parts = spec.provider, spec.scenario, dict(spec.parts)
        server = provider.server
        shutil.rmtree(folder, ignore_errors=True)
        for stale in self.root.glob(f"tmp-{key}-*"):  # a builder that died (a live one would hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        need = snapshot_bytes(spec.redo_log_bytes, scenario)
        _check_space(self.root, need, scenario, server)
        outdated = self.outdated(scenario)
        if outdated:
            size = sum(folder_bytes(f) for f in outdated)
            say(
                f"note: {len(outdated)} dataset snapshot(s) in {self.root} ({_mb(size)}) hold the rows of an "
                "earlier dbperf loader and are never restored again; `dbperf cache clear` removes them"
            )
        say(
            f"preparing dataset {scenario.tables} x {scenario.table_size:,} rows for {server.flavour} "
            f"({scenario.script}); it is kept as a snapshot and reused"
        )
        building = time.monotonic()  # the whole preparation, kept as build_s: estimates price it
        stamp = workspace.current().stamp(f"tmp-{key}-")
        work = Path(tempfile.mkdtemp(prefix=stamp, dir=self.root))
        try:
            credentials = DatasetCredentials.generate()
            datadir = work / "datadir"
            provider.initialize(datadir, credentials)
            with provider.serve(Launch(datadir, credentials, spec.variables)) as instance:
                prepare_s = prepare(scenario, instance.endpoint, threads=2)
            meta = {
                "key": key,
                "key_parts": parts,
                "user": credentials.user,
                "password": credentials.password,
                "prepare_s": prepare_s,
                "build_s": round(time.monotonic() - building, 1),
                "created": time.time(),
                "files": manifest(datadir),
            }
            (work / "meta.json").write_text(json.dumps(meta, indent=2))
            work.rename(folder)
        except HarnessError as exc:
            if _out_of_space(self.root, need, exc):  # checked before the half-built folder goes
                try:
                    _check_space(self.root, need, scenario, server, failed=str(exc))
                finally:
                    shutil.rmtree(work, ignore_errors=True)
            shutil.rmtree(work, ignore_errors=True)
            raise
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        say(f"dataset prepared in {prepare_s:.1f} s")
        snapshot = self._load(folder, verify=False)
        _VERIFIED.add(key)
        assert snapshot is not None
        return snapshot

    @contextmanager
    def restore(self, snapshot: Snapshot) -> Iterator[Path]:
        """A private copy of the snapshot's datadir (in this process's workspace), removed afterwards."""
        with workspace.current().temp("datadir") as work:
            copy = work / "datadir"
            try:
                copy_datadir(snapshot.datadir, copy)
            except ServerError as exc:
                need = folder_bytes(snapshot.datadir)
                free = shutil.disk_usage(work).free
                if "No space left" in str(exc) or free < need:
                    raise ServerError(
                        f"no space left on device in {work.parent.parent} for a copy of the dataset snapshot: "
                        f"{_mb(free)} free, a copy needs {_mb(need)}; free space there or point TMPDIR at a "
                        "larger disk"
                    ) from exc
                raise
            yield copy

    def outdated(self, scenario: Scenario | None = None) -> list[Path]:
        """Snapshots an earlier loader prepared (another ``DATASET_LOADER``, or an earlier ``[dataset] loader``
        of ``scenario``'s script): no run restores them again."""
        found = []
        for meta_path in sorted(self.root.glob("*/meta.json")):
            try:
                parts = json.loads(meta_path.read_text()).get("key_parts")
            except (OSError, ValueError, AttributeError):
                continue  # damaged: snapshot() says so and prepares it again when its key is asked for
            if not isinstance(parts, dict):
                continue
            dataset = parts.get("dataset")
            earlier_rows = (
                scenario is not None
                and isinstance(dataset, dict)
                and dataset.get("script") == scenario.dataset_key()["script"]
                and int(dataset.get("loader", 1)) < scenario.dataset_loader
            )
            if parts.get("loader", 1) != DATASET_LOADER or earlier_rows:
                found.append(meta_path.parent)
        return found

    def clear(self) -> int:
        """Remove every snapshot; returns how many."""
        count = 0
        if self.root.is_dir():
            for folder in self.root.iterdir():
                if folder.is_dir():
                    shutil.rmtree(folder, ignore_errors=True)
                    count += 1
        return count
