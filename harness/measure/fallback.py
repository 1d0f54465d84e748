"""A measured run is never lost: when the store cannot take it, it goes to a file the user is told about.

:class:`Saver` wraps the store's ``save``. If saving raises :class:`StoreError` (a full disk, a
damaged file, a lock held for too long), the run is written as one JSON file, the first of these
folders that takes it::

    $XDG_DATA_HOME/dbperf/unsaved/<run_id>.json     (~/.local/share/dbperf/unsaved/ by default)
    <store>.unsaved/<run_id>.json                   beside the store, when its disk still has room

and if neither does, its numbers are printed on stderr. Measuring goes on (later runs may still be
stored), the summary is printed as usual, and the command ends with exit status 2 and one line
naming the files; ``dbperf import unsaved FILE...`` stores them later.

The file holds the run's rows exactly as the store would (every table: runs, intervals, histogram,
cost profile), so nothing is lost in the round trip, plus a readable summary.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from harness import bounded_json
from harness.errors import StoreError, StoreUnansweredError
from harness.model import IntervalSample, LatencyBucket, RunResult
from harness.store.location import is_lake
from harness.store.rows import BUCKET_FIELDS, INTERVAL_FIELDS, TABLES, arrow_tables, profile_from_rows, run_from_row

T = TypeVar("T")

FORMAT = "dbperf-unsaved-run"
FORMAT_VERSION = 1
#: What this process gave up waiting on (a store that stopped answering): its threads are stuck for good.
ABANDONED: list[str] = []
#: Seconds a save may take before the user is told what it is waiting for.
WAIT_NOTICE_S = 2.0


def unsaved_folders(store: Path | str) -> list[Path]:
    """Where runs the store could not take are written, in order of preference."""
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    folders = [Path(data_home) / "dbperf" / "unsaved"]
    if not is_lake(store):
        path = Path(store)
        folders.append(path.parent / (path.name + ".unsaved"))
    return folders


def _plain(value: object) -> object:
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode()}
    return value


def _revive(obj: dict[str, Any]) -> object:
    if set(obj) == {"$datetime"}:
        return datetime.fromisoformat(obj["$datetime"])
    if set(obj) == {"$bytes"}:
        return base64.b64decode(obj["$bytes"])
    return obj


def encode(run: RunResult) -> str:
    """The run as one JSON document: its store rows (lossless) and a readable summary."""
    tables = {name: table.to_pylist() for name, table in arrow_tables([run]).items()}
    rows = {name: [{k: _plain(v) for k, v in row.items()} for row in table] for name, table in tables.items()}
    doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "summary": run.summary_dict(), "tables": rows}
    return json.dumps(doc, indent=1, default=str) + "\n"


def decode(text: str, source: str = "<text>") -> RunResult:
    """A run back from :func:`encode`'s document; a clear error for anything else."""
    try:
        doc = bounded_json.loads(text, object_hook=_revive)
    except (json.JSONDecodeError, ValueError) as exc:
        raise StoreError(f"{source}: not an unsaved-run file ({exc}); give the files dbperf named") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise StoreError(f"{source}: not an unsaved-run file (no '{FORMAT}' format marker)")
    if doc.get("format_version") != FORMAT_VERSION:
        raise StoreError(f"{source}: unsaved-run format {doc.get('format_version')} is not known to this dbperf")
    try:
        tables: dict[str, list[dict[str, Any]]] = {name: doc["tables"].get(name, []) for name in TABLES}
        (row,) = tables["runs"]
        intervals = [IntervalSample(**{k: r[k] for k in INTERVAL_FIELDS}) for r in tables["intervals"]]
        buckets = [LatencyBucket(**{k: r[k] for k in BUCKET_FIELDS}) for r in tables["histogram"]]
        profile = None
        if tables["profiles"]:
            head = tables["profiles"][0]
            profile = profile_from_rows(head["total_ir"], head["dump"], tables["functions"])
        return run_from_row(row, intervals, buckets, profile)
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{source}: damaged unsaved-run file ({exc.__class__.__name__}: {exc})") from None


def read_unsaved(path: Path) -> RunResult:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read {path}: {exc}; give the files dbperf named") from None
    return decode(text, str(path))


def write_unsaved(run: RunResult, folders: list[Path]) -> Path | None:
    """Write the run into the first folder that takes it (atomically); None if none does."""
    text = encode(run)
    for folder in folders:
        target = folder / f"{run.run_id}.json"
        partial = folder / f".{run.run_id}.json.partial"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with partial.open("w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            partial.rename(target)
        except OSError:
            with contextlib.suppress(OSError):
                partial.unlink()
            continue
        return target
    return None


@contextmanager
def waiting_notice(say: Callable[[str], None], message: str, after_s: float | None = None) -> Iterator[None]:
    """Say ``message`` once if the block is still running after ``after_s`` seconds (a lock, a slow disk;
    default :data:`WAIT_NOTICE_S`)."""
    timer = threading.Timer(WAIT_NOTICE_S if after_s is None else after_s, say, args=(message,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@dataclass
class Unsaved:
    """Runs the store could not take in this invocation, and where they went instead."""

    files: list[Path] = field(default_factory=list)
    nowhere: list[str] = field(default_factory=list)  # run ids written nowhere (printed on stderr)
    cause: str = ""

    def __bool__(self) -> bool:
        return bool(self.files or self.nowhere)

    def message(self, store: Path | str) -> str:
        """The one closing line: what failed, where the runs are, and how to store them later."""
        count = len(self.files) + len(self.nowhere)
        head = f"the store {store} could not take {count} measured run(s) ({self.cause})"
        if not self.files:
            return f"{head}, and no fallback folder could either: their numbers are printed above; free space"
        files = " ".join(str(f) for f in self.files)
        lost = f" ({len(self.nowhere)} more printed above)" if self.nowhere else ""
        return f"{head}; kept in {files}{lost}: fix the store, then run `dbperf import unsaved {files}`"


def call_within(action: Callable[[], T], limit_s: float, what: str) -> T:
    """``action()`` on a worker thread, given up after ``limit_s`` seconds with a :class:`StoreError`.

    For a store behind a network (a DuckLake's PostgreSQL catalog): a catalog that is frozen (SIGSTOP,
    a paused VM) keeps its TCP connection open and never answers, and no client-side timeout of libpq
    covers a query already sent. The worker is a daemon thread and is abandoned, with its connection;
    whoever gets the error must not use that store again in this process."""
    result: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            result.append(action())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            failure.append(exc)

    worker = threading.Thread(target=work, name=f"dbperf-store-{what}", daemon=True)
    worker.start()
    worker.join(limit_s)
    if worker.is_alive():
        ABANDONED.append(worker.name)
        raise StoreUnansweredError(
            f"the store did not answer for {limit_s:g} s while trying to {what} (a frozen or unreachable catalog, "
            "or a lock nobody frees)"
        )
    if failure:
        raise failure[0]
    return result[0]


@dataclass
class Saver:
    """The store's ``save`` with a fallback (see the module docstring), used as ``Session.save``.

    ``limit_s`` bounds one save by the clock (given for a DuckLake, whose catalog can stop answering
    mid-save). Once a save has been given up, the store is not tried again in this invocation: its
    connection is still waiting on the abandoned save, so every later run goes straight to a file.
    """

    save: Callable[[RunResult], None]
    store: Path | str
    say: Callable[[str], None]
    unsaved: Unsaved = field(default_factory=Unsaved)
    limit_s: float | None = None
    abandoned: str = ""  # why the store is no longer tried, once a save was given up

    def __call__(self, run: RunResult) -> None:
        try:
            self._save(run)
        except Exception as exc:  # noqa: BLE001 - any failure to save, wherever raised, keeps the run
            if not isinstance(exc, StoreError):
                exc = StoreError(f"saving into {self.store} failed ({type(exc).__name__}: {exc})")
            self.unsaved.cause = self.unsaved.cause or str(exc)
            path = write_unsaved(run, unsaved_folders(self.store))
            if path is None:
                self.unsaved.nowhere.append(run.run_id)
                self.say(f"error: run {run.run_id} could not be saved anywhere: {json.dumps(run.summary_dict())}")
            else:
                self.unsaved.files.append(path)
                self.say(
                    f"warning: the store could not take run {run.run_id} ({exc}); kept in {path}: store it later "
                    f"with `dbperf import unsaved {path}`"
                )

    def _save(self, run: RunResult) -> None:
        if self.abandoned:
            raise StoreError(self.abandoned)
        if self.limit_s is None:
            note = f"still saving run {run.run_id} into {self.store}: waiting for its lock (another dbperf process?)"
            with waiting_notice(self.say, note):
                self.save(run)
            return
        note = (
            f"still saving run {run.run_id}: waiting for the store {self.store} (a lock held by another writer, "
            f"or a catalog that does not answer; up to {self.limit_s:g} s, then the run is kept in a file)"
        )
        try:
            with waiting_notice(self.say, note):
                call_within(lambda: self.save(run), self.limit_s, f"save run {run.run_id}")
        except StoreUnansweredError as exc:
            self.abandoned = f"{exc}; not tried again for later runs of this invocation"
            raise
