"""One owner-stamped folder per dbperf process, holding everything the process makes on disk.

Every temporary thing a dbperf process creates (restored datadir copies, server run folders with
their sockets, logs and callgrind dumps, sysbench work folders, CI work trees) lives under::

    $TMPDIR/dbperf-<pid>-<start>/       <start>: the process start time, /proc/<pid>/stat field 22
        owner                           who made it (pid, start time, command), for people
        pids/<pid>                      processes it started that must not outlive it (servers, sysbench)
        containers/<id>                 containers it started
        datadir-*/ local-*/ sysbench-*/ ...

The pid and the start time in the folder's name tell a live owner from a dead one (a recycled pid
has another start time), so a later dbperf process can remove the leftovers of one that was killed
(kill -9, the OOM killer, a CI job timeout): :func:`sweep` stops the processes listed in ``pids/``
(only if they are still the same processes), removes the containers, then the folder. Every command
that starts servers sweeps first, and ``dbperf sweep`` does it on request.

Snapshots being built in the dataset cache are owner-stamped the same way (``tmp-<key>-<pid>-<start>-*``)
because they must stay on the cache's file system to be renamed into place; see
:mod:`harness.dataset`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError

PREFIX = "dbperf-"
_NAME = re.compile(r"^dbperf-(\d+)-(\d+)$")
_STAMP = re.compile(r"-(\d+)-(\d+)-[^-]*$")  # ...-<pid>-<start>-<random> at the end of a name


def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot), or None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ")"
    fields = stat[stat.rfind(")") + 2 :].split()
    if not fields or fields[0] in {"Z", "X"}:  # a zombie is dead, only not yet reaped by its parent
        return None
    try:
        return int(fields[19])  # field 22 overall
    except (IndexError, ValueError):
        return None


#: Environment variables a child process never needs and must never see (``/proc/<pid>/environ`` is
#: readable by the child's own account, and by whatever runs as it): libpq's catalog password and
#: password file, and anything named like a credential (tokens of Bencher and GitHub, the
#: ``password_env`` of external servers, whose value dbperf hands to sysbench in a 0600 file).
_SECRET_NAMES = frozenset({"PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "DBPERF_STORE"})
_SECRET_PATTERN = re.compile(r"PASSWORD|PASSWD|TOKEN|SECRET|API_KEY|ACCESS_KEY|CREDENTIAL", re.IGNORECASE)


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every process dbperf starts gets: this one without the store's or anyone's secrets."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if k not in _SECRET_NAMES and not _SECRET_PATTERN.search(k)}


@dataclass(frozen=True)
class Owner:
    """A process identified by its pid and start time (a recycled pid is another owner)."""

    pid: int
    start: int

    @staticmethod
    def me() -> Owner:
        pid = os.getpid()
        return Owner(pid, process_start(pid) or 0)

    def alive(self) -> bool:
        return process_start(self.pid) == self.start

    @property
    def stamp(self) -> str:
        return f"{self.pid}-{self.start}"


def stamped_owner(name: str) -> Owner | None:
    """The owner stamped at the end of a name made by :meth:`Workspace.stamp` (None if unstamped)."""
    match = _STAMP.search(name)
    return Owner(int(match.group(1)), int(match.group(2))) if match else None


class Workspace:
    """The folder of one dbperf process (created on first use, removed when the process ends)."""

    def __init__(self, root: Path, owner: Owner) -> None:
        self.owner = owner
        self.folder = root / f"{PREFIX}{owner.stamp}"

    def _ensure(self) -> Path:
        if not self.folder.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            command = " ".join(Path(a).name if i == 0 else a for i, a in enumerate(sys.argv))
            info = {"pid": self.owner.pid, "start": self.owner.start, "command": command, "created": time.time()}
            (self.folder / "owner").write_text(json.dumps(info) + "\n")
        return self.folder

    def make(self, kind: str) -> Path:
        """A new private folder ``<kind>-*`` in the workspace."""
        return Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=self._ensure()))

    @contextmanager
    def temp(self, kind: str) -> Iterator[Path]:
        """A private folder for the duration of the block (removed afterwards, whatever happens)."""
        folder = self.make(kind)
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def track(self, pid: int, what: str) -> None:
        """Note a started process so that a sweep stops it if this process dies first."""
        start = process_start(pid)
        if start is None:
            return
        folder = self._ensure() / "pids"
        folder.mkdir(exist_ok=True)
        (folder / str(pid)).write_text(f"{start} {what}\n")

    def untrack(self, pid: int) -> None:
        with contextlib.suppress(OSError):
            (self.folder / "pids" / str(pid)).unlink()

    def track_container(self, container_id: str) -> None:
        folder = self._ensure() / "containers"
        folder.mkdir(exist_ok=True)
        (folder / container_id).write_text("")

    def untrack_container(self, container_id: str) -> None:
        with contextlib.suppress(OSError):
            (self.folder / "containers" / container_id).unlink()

    def stamp(self, prefix: str) -> str:
        """A name prefix carrying this process's stamp (for folders that must live elsewhere)."""
        return f"{prefix}{self.owner.stamp}-"

    def close(self) -> None:
        """Remove the folder (at exit: every server and run folder is already gone by then)."""
        if self.folder.is_dir():
            _stop_tracked(self.folder)
            shutil.rmtree(self.folder, ignore_errors=True)


_current: Workspace | None = None


def current() -> Workspace:
    """This process's workspace under the temporary folder (``$TMPDIR``)."""
    global _current  # noqa: PLW0603 - one workspace per process, like the process itself
    owner = Owner.me()
    root = Path(tempfile.gettempdir())
    if _current is None or _current.owner != owner or _current.folder.parent != root:
        _current = Workspace(root, owner)
    return _current


@atexit.register
def _close_at_exit() -> None:
    if _current is not None and _current.owner == Owner.me():
        _current.close()


def _stop_tracked(folder: Path) -> list[str]:
    """SIGKILL the processes listed in ``folder/pids`` that are still the ones that were started."""
    stopped: list[str] = []
    pids = folder / "pids"
    if not pids.is_dir():
        return stopped
    for entry in pids.iterdir():
        try:
            start_text, _, what = entry.read_text().strip().partition(" ")
            owner = Owner(int(entry.name), int(start_text))
        except (OSError, ValueError):
            continue
        if owner.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getpgid(owner.pid) == owner.pid:  # a group leader (servers, initialisers): its children too
                    os.killpg(owner.pid, signal.SIGKILL)
                else:
                    os.kill(owner.pid, signal.SIGKILL)
                stopped.append(f"{what or 'process'} (pid {owner.pid})")
    return stopped


Remover = Callable[[list[str], int], list[str]]
"""Removes a dead owner's tracked resources of one kind (ids, owner pid) and returns what it removed."""

_REMOVERS: dict[str, Remover] = {}


def register_remover(kind: str, remover: Remover) -> None:
    """How tracked resources of ``kind`` (a folder of ids in a workspace, e.g. ``containers``) are removed.

    Providers register here (:mod:`harness.servers` registers the container remover), so this module
    imports no provider. A dead owner's folder that tracks resources no registered remover can take is
    left in place for a process that can, never deleted with them still running.
    """
    _REMOVERS[kind] = remover


def _remove_tracked(folder: Path, owner_pid: int) -> tuple[list[str], bool]:
    """What the registered removers took away, and whether everything tracked could be handed to one."""
    removed: list[str] = []
    complete = True
    for kind in ("containers",):
        ids = [p.name for p in (folder / kind).iterdir()] if (folder / kind).is_dir() else []
        if not ids:
            continue
        remover = _REMOVERS.get(kind)
        if remover is None:
            complete = False
            continue
        try:
            removed += [f"{kind.rstrip('s')} {name}" for name in remover(ids, owner_pid)]
        except HarnessError:
            continue
    return removed, complete


def sweep(root: Path | None = None, cache_dir: Path | None = None) -> list[str]:
    """Remove what dead dbperf processes left: their servers, containers and folders; returns what went.

    Only folders whose owner is gone are touched; a live process's folder (another dbperf run on
    this machine) is left alone.
    """
    root = root or Path(tempfile.gettempdir())
    removed: list[str] = []
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            match = _NAME.match(entry.name)
            if not match or not entry.is_dir():
                continue
            owner = Owner(int(match.group(1)), int(match.group(2)))
            if owner.alive():
                continue
            removed += _stop_tracked(entry)
            taken, complete = _remove_tracked(entry, owner.pid)
            removed += taken
            if complete:
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(f"folder {entry} (dbperf process {owner.pid}, gone)")
    if cache_dir is not None:
        snapshots = cache_dir / "snapshots"
        with contextlib.suppress(OSError):
            for entry in snapshots.glob("tmp-*"):
                owner_of = stamped_owner(entry.name)
                if owner_of is not None and not owner_of.alive():
                    shutil.rmtree(entry, ignore_errors=True)
                    removed.append(f"unfinished snapshot {entry} (dbperf process {owner_of.pid}, gone)")
    return removed


def live_owners(root: Path | None = None) -> list[Owner]:
    """Other dbperf processes with a workspace under ``root`` that are still running."""
    root = root or Path(tempfile.gettempdir())
    me = Owner.me()
    found = []
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            match = _NAME.match(entry.name)
            if match:
                owner = Owner(int(match.group(1)), int(match.group(2)))
                if owner != me and owner.alive():
                    found.append(owner)
    return found
