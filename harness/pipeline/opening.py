"""Opening an invocation's session: the step every pipeline command takes before its first run.

Sweep what dead dbperf processes left, check sysbench, fingerprint the testbed, warn about a busy machine,
open the store (and a second one every run also goes to); the :class:`~harness.measure.session.Session`
it returns resolves each server's setup once and provisions every run (:mod:`harness.measure.provision`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from harness import workspace
from harness.config.settings import Settings, current_git_sha, uncommitted_changes
from harness.dataset import DatasetCache
from harness.measure.fallback import Saver, call_within, waiting_notice
from harness.measure.session import Ledger, Reporter, Session
from harness.model import RunResult, Server
from harness.model.history import uncommitted_note
from harness.pipeline.overhead import opened
from harness.store import open_store
from harness.store.check import open_checked
from harness.store.location import is_lake
from harness.sysbench.driver import check_version
from harness.testbed import fingerprint, preflight


def open_session(
    settings: Settings,
    reporter: Reporter,
    *,
    containers: bool,
    check: bool = True,
    also_store: Path | str | None = None,
) -> Session:
    """Sweep what dead dbperf processes left, check sysbench, fingerprint the testbed, warn about a busy
    machine, and open the store, reading it whole: a damaged store is refused before anything runs.

    ``also_store`` is a second store every run goes to after the first (``ci run``'s shared lake or the
    user's store file beside ``out/``); one that fails or stops answering keeps the run in a file too."""
    also_save = None
    if also_store is not None:
        limit_s = settings.store_timeout
        shared = call_within(lambda: open_store(also_store, timeout_s=limit_s), limit_s, "open it")
        also_save = Saver(shared.save, also_store, reporter.phase, limit_s=limit_s)
    swept = workspace.sweep(cache_dir=settings.cache_dir)
    if swept:
        reporter.phase(f"removed what dbperf processes that died left behind: {'; '.join(swept)}")
    version = check_version()
    testbed = fingerprint(version, with_engine=containers, hardware_class=settings.testbed_class)
    warnings = preflight() if check else []
    git_sha = current_git_sha(settings.root)
    if uncommitted_changes(settings.root):  # said once, and in every run's notes (the trend site's cue)
        warnings.append(uncommitted_note(git_sha))
    for warning in warnings:
        reporter.phase(f"warning: {warning}")
    limit = settings.store_timeout
    lake = is_lake(settings.store)
    if lake:  # a catalog that never answers would hang here: opening it is bounded by the clock
        waiting = f"waiting for the store {settings.store}: its catalog has not answered yet (up to {limit} s)"
        with waiting_notice(reporter.phase, waiting, after_s=10):  # opening a lake takes seconds
            store = call_within(lambda: open_checked(settings.store, timeout_s=limit), limit, "open it")
    else:
        waiting = f"waiting for the store {settings.store}: another dbperf process holds its lock (up to 600 s)"
        with waiting_notice(reporter.phase, waiting):
            store = open_checked(settings.store)
    ledger = Ledger(warnings=list(warnings))
    save = Saver(store.save, settings.store, reporter.phase, ledger.unsaved, limit_s=limit if lake else None)
    session = Session(
        cache=DatasetCache(settings.cache_dir),
        testbed=testbed,
        git_sha=git_sha,
        save=save if also_save is None else _both(save, also_save),
        reporter=reporter,
        sysbench_version=version,
        ledger=ledger,
    )
    return opened(session)  # its runs are this invocation's: their overhead is measured (pipeline/overhead.py)


def shared_session(
    settings: Settings, shared: Path | str, reporter: Reporter, servers: Iterable[Server]
) -> Session | None:
    """A session that saves every run in ``shared`` too, when it is another store than the settings' (a
    lake, or another store file); None when it is the same one (the pipeline opens its own)."""
    if not is_lake(shared) and Path(shared).resolve() == Path(settings.store).resolve():
        return None
    containers = any(s.provider == "container" for s in servers)
    return open_session(settings, reporter, containers=containers, also_store=shared)


def _both(first: Callable[[RunResult], None], second: Callable[[RunResult], None]) -> Callable[[RunResult], None]:
    def save(run: RunResult) -> None:
        first(run)
        second(run)

    return save
