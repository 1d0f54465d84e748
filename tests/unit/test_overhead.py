"""The invocation overhead: measured outside the runs, kept on the runner, read by the estimates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.pipeline import overhead
from harness.pipeline.overhead import Overhead, append, measured, outside, shape


def test_outside_is_the_time_before_the_first_run_and_after_the_last_less_the_datasets() -> None:
    runs = [(110.0, 130.0), (112.0, 128.0), (135.0, 150.0)]  # two side by side, then a third after a gap
    assert outside(100.0, 160.0, runs, []) == 10.0 + 10.0  # the gap between runs is not overhead
    assert outside(100.0, 160.0, runs, [(101.0, 105.0)]) == 16.0  # a dataset built before the first run
    assert outside(100.0, 160.0, runs, [(131.0, 134.0)]) == 20.0  # one built between runs: already outside
    assert outside(100.0, 160.0, runs, [(95.0, 200.0)]) == 0.0  # never below zero


def lines(*entries: dict[str, object]) -> str:
    return "".join(json.dumps(e) + "\n" for e in entries)


def entry(seconds: float, comparisons: int, host: str = "runner") -> dict[str, object]:
    return {"host": host, "command": "compare", "overhead_s": seconds, "comparisons": comparisons, "runs": 6}


def test_no_ledger_is_assumed(tmp_path: Path) -> None:
    found = measured(tmp_path, "runner")
    assert found == Overhead() and not found.measured and found.seconds(2) == shape(2) == 9.0


def test_the_scale_is_the_median_of_this_runners_newest_invocations(tmp_path: Path) -> None:
    (tmp_path / overhead.LEDGER).write_text(
        lines(entry(100.0, 0), *(entry(shape(1) * r, 1) for r in (0.2, 0.4, 0.3)), entry(99.0, 1, host="other"))
        + "not json\n"
        + lines({"host": "runner"})  # a line without its figures: skipped
    )
    found = measured(tmp_path, "runner")
    assert found.source == "measured (4 invocations)"
    assert found.scale == pytest.approx((0.3 + 0.4) / 2)  # median of 10.0, 0.2, 0.4, 0.3
    assert found.seconds(3) == pytest.approx(shape(3) * 0.35)


def test_only_the_newest_invocations_count(tmp_path: Path) -> None:
    old = [entry(shape(0) * 5, 0)] * 10
    new = [entry(shape(0) * 0.5, 0)] * overhead.RECENT
    (tmp_path / overhead.LEDGER).write_text(lines(*old, *new))
    assert measured(tmp_path, "runner").scale == 0.5


def test_the_ledger_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overhead, "KEEP", 3)
    path = tmp_path / "cache" / overhead.LEDGER
    for n in range(7):
        append(path, {"n": n})
    kept = [json.loads(t)["n"] for t in path.read_text().splitlines()]
    assert kept == [4, 5, 6]  # at the 7th line (past 2 x KEEP) the oldest went: KEEP are left


def test_process_started_is_before_now() -> None:
    import time

    assert time.time() - 3600 < overhead.process_started() <= time.time()


class _Session:
    """What :func:`overhead.opened` reads of a session: its ledger, its dataset look-ups and its cache."""

    def __init__(self, cache: Path, spans: list[tuple[float, float]]) -> None:
        from harness.dataset import DatasetCache
        from harness.measure.session import Ledger

        self.ledger = Ledger(spans=spans, comparisons=1)
        self.prepared: list[tuple[float, float]] = []
        self.cache = DatasetCache(cache)


def test_an_invocation_is_noted_from_its_process_start_or_its_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dbperf process counts from its start (Python's start and imports are the invocation's); a program
    that started long before it called the CLI counts from the command line; no run, nothing noted."""
    monkeypatch.setattr(overhead, "_opened", [])
    overhead.note("runs", 100.0, ended=110.0)  # opened no session
    assert not (tmp_path / overhead.LEDGER).exists()
    for started in (99.0, 10.0):
        monkeypatch.setattr(overhead, "process_started", lambda started=started: started)
        overhead.opened(_Session(tmp_path, [(104.0, 106.0)]))  # type: ignore[arg-type]
        overhead.note("compare", 100.0, ended=110.0)
    first, second = (json.loads(t) for t in (tmp_path / overhead.LEDGER).read_text().splitlines())
    assert (first["overhead_s"], first["wall_s"]) == (5.0 + 4.0, 11.0)  # from the process start, 1 s earlier
    assert (second["overhead_s"], second["wall_s"]) == (4.0 + 4.0, 10.0)  # from the command line
    assert first["comparisons"] == 1 and first["runs"] == 1 and first["command"] == "compare"


def test_a_ledger_that_cannot_be_written_or_read_never_fails_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache folder is a file (or unreadable): the invocation ends as it would have, nothing is written,
    and the next estimate's overhead is the assumed one."""
    blocked = tmp_path / "cache"
    blocked.write_text("not a folder")
    monkeypatch.setattr(overhead, "_opened", [])
    monkeypatch.setattr(overhead, "process_started", lambda: 99.0)
    overhead.opened(_Session(blocked, [(104.0, 106.0)]))  # type: ignore[arg-type]
    overhead.note("compare", 100.0, ended=110.0)  # no exception
    assert blocked.read_text() == "not a folder" and overhead._opened == []
    assert measured(blocked) == Overhead()  # <file>/invocations.jsonl cannot be read: assumed
