"""Estimates said before a command starts (harness/pipeline/estimates.py): priced by this machine's stored
durations of the same server, scenario, kind and thread count, the datasets the snapshot cache lacks, and
"assumed" only where nothing was measured (issue 33, item 3)."""

from __future__ import annotations

import dataclasses
import json
import platform
from datetime import timedelta
from pathlib import Path

import pytest
from support.factories import run

from harness import pipeline
from harness.config.settings import resolve_settings
from harness.dataset import snapshot_key
from harness.model import MetricVerdict, Outcome, Verdict, stable_hash
from harness.pipeline import estimates
from harness.pipeline.estimates import GAP_S, History, Work, dataset_price, line, per_run
from harness.pipeline.overhead import LEDGER, shape
from harness.plugin import Runner

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]


def settings(tmp_path: Path, **flags: object):  # type: ignore[no-untyped-def]
    base = {"scenarios-dir": REPO / "scenarios", "servers-dir": REPO / "servers", "profile": "quick"}
    return resolve_settings({**base, "cache-dir": tmp_path / "cache", **flags}, root=REPO)


def test_a_run_is_priced_by_the_lower_median_of_its_newest_runs(tmp_path: Path):
    case = pipeline.resolve(settings(tmp_path), "oltp_point_select", "mariadb-local")
    s = case.scenario
    key = ("mariadb-local", "oltp_point_select", "cost", 1)
    # newest first: a first run that also prepared its dataset (90 s) does not set the price
    assert per_run({key: [(0, 0, 20.0), (0, 0, 90.0)]}, "mariadb-local", case.server, s, "cost", 1) == (
        20.0,
        "measured (2 runs)",
    )
    assert (
        per_run({key: [(0, 0, 22.0), (0, 0, 20.0), (0, 0, 24.0)]}, "mariadb-local@base", case.server, s, "cost", 1)[0]
        == 22.0
    )
    timed = ("mariadb-local", "oltp_point_select", "time", 2)
    other_length = {timed: [(s.warmup_s + 5, s.time_s, 99.0)]}  # another warm-up: not this run's length
    assert per_run(other_length, "mariadb-local", case.server, s, "time", 2)[1] == "assumed"


def test_a_head_with_no_runs_of_its_own_is_priced_like_its_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DBPERF_COST_SLOTS", "1")
    given = settings(tmp_path, cost=True)
    case = pipeline.resolve(given, "oltp_point_select", "mariadb-local")
    head = case.server.with_variables({"thread_cache_size": "64"})
    spec = pipeline.ComparisonSpec(case.server, head, case.scenario)
    history = History({("mariadb-local", "oltp_point_select", "cost", 1): [(0, 0, 30.0)]})
    found = estimates.estimate(given, estimates.of_specs([spec], ("cost",), 6), history, comparisons=1)
    assert [i.source for i in found.items] == ["measured (1 runs)", "measured (1 runs)"]
    reps = case.scenario.cost.repetitions
    assert found.runs == 2 * reps
    assert sum(i.seconds for i in found.items) == 2 * reps * (30.0 + GAP_S)
    assert found.overhead_s > shape(1) and found.overhead_source == "assumed"  # slower than assumed: scaled


def test_a_measured_overhead_replaces_the_assumed_one(tmp_path: Path) -> None:
    """With this runner's invocations in the ledger, the overhead is theirs (not scaled by the load) and says so."""
    given = settings(tmp_path, cost=True)
    case = pipeline.resolve(given, "oltp_point_select", "mariadb-local")
    spec = pipeline.ComparisonSpec(case.server, case.server.with_variables({"thread_cache_size": "64"}), case.scenario)
    history = History({("mariadb-local", "oltp_point_select", "cost", 1): [(0, 0, 30.0)]})
    given.cache_dir.mkdir(parents=True, exist_ok=True)
    entry = {"host": platform.node(), "command": "compare", "overhead_s": shape(1) / 4, "comparisons": 1, "runs": 6}
    (given.cache_dir / LEDGER).write_text(json.dumps(entry) + "\n")
    found = estimates.estimate(given, estimates.of_specs([spec], ("cost",), 6), history, comparisons=1)
    assert found.overhead_s == shape(1) / 4 and found.overhead_source == "measured (1 invocation)"
    assert "session and plan checks 2 s (measured)" in line(found)


def test_cost_runs_side_by_side_are_priced_at_the_runners_slot_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An A/B comparison's cost runs go as many at a time as run_side_by_side will use (cost_slots.slots_for):
    a stored run's span is its own (alone or beside another), so the sum is divided once, by the slots."""
    given = settings(tmp_path, cost=True)
    case = pipeline.resolve(given, "oltp_point_select", "mariadb-local")
    head = case.server.with_variables({"innodb_flush_log_at_trx_commit": "2"})
    spec = pipeline.ComparisonSpec(case.server, head, case.scenario)
    history = History({("mariadb-local", "oltp_point_select", "cost", 1): [(0, 0, 30.0)]})
    reps = case.scenario.cost.repetitions
    priced = {}
    for slots in ("1", "2"):
        monkeypatch.setenv("DBPERF_COST_SLOTS", slots)
        found = estimates.estimate(given, estimates.of_specs([spec], ("cost",), 6), history, comparisons=1)
        assert [i.slots for i in found.items] == [int(slots)] * 2
        assert found.runs == 2 * reps  # the runs are all still counted
        priced[slots] = found.by_kind("cost")
        assert ("cost runs 2 at a time" in line(found)) == (slots == "2")
    assert priced["1"] == 2 * reps * (30.0 + GAP_S)
    assert priced["2"] == reps * (30.0 + GAP_S)  # 2 x reps runs of 32 s, two at a time
    # the overhead's load factor compares one run's own span with the profile's: slots leave it alone
    assert found.items[0].per_run_s == 30.0 + GAP_S
    # a plain run of cases (no comparison) runs its cost runs one after another
    plain = estimates.estimate(given, estimates.of_cases(given, [case], ("cost",)), history)
    assert [i.slots for i in plain.items] == [1] and "at a time" not in line(plain)


def test_the_estimate_is_the_sum_of_what_it_names(tmp_path: Path):
    given = settings(tmp_path)
    cases = [pipeline.resolve(given, "oltp_point_select", "mariadb-local")]
    work = estimates.of_cases(given, cases, ("time", "cost"))
    found = estimates.estimate(given, work, History())
    assert {i.source for i in found.items} == {"assumed"}
    total = sum(i.runs * i.per_run_s for i in found.items) + found.overhead_s
    assert found.seconds == pytest.approx(total)
    text = line(found)
    assert text.startswith("estimate: about ") and "none measured on this machine yet: assumed" in text


def _snapshot(cache: Path, folder: str, parts: dict[str, object], build_s: float | None) -> None:
    (cache / "snapshots" / folder / "datadir").mkdir(parents=True)
    meta = {"key": "k", "key_parts": parts, "prepare_s": 3.0, **({"build_s": build_s} if build_s else {})}
    (cache / "snapshots" / folder / "meta.json").write_text(json.dumps(meta))


def test_a_dataset_not_in_the_cache_is_priced_by_the_preparations_of_its_shape(tmp_path: Path):
    given = settings(tmp_path)
    case = pipeline.resolve(given, "oltp_point_select", "mariadb-local")
    server, scenario = case.server, case.scenario
    assumed = dataset_price(given.cache_dir, server, "build-1", scenario, "1.0.20")
    assert assumed is not None and assumed.source == "assumed"
    # the same shape prepared for another build of the server: its time prices this one
    other = snapshot_key(server, "build-0", scenario, "1.0.20")
    _snapshot(given.cache_dir, "mariadb-other", other, 41.5)
    measured = dataset_price(given.cache_dir, server, "build-1", scenario, "1.0.20")
    assert measured is not None and (measured.seconds, measured.source) == (41.5, "measured (1 preparations)")
    # this build's snapshot is there: nothing to prepare
    parts = snapshot_key(server, "build-1", scenario, "1.0.20")
    _snapshot(given.cache_dir, f"mariadb-{stable_hash(parts, 16)}", parts, None)
    assert dataset_price(given.cache_dir, server, "build-1", scenario, "1.0.20") is None


def test_datasets_to_prepare_are_counted_once(tmp_path: Path):
    given = settings(tmp_path)
    cases = [pipeline.resolve(given, "oltp_point_select", "mariadb-local")]
    work = estimates.of_cases(given, cases, ("time", "cost"))  # both kinds share one dataset
    found = estimates.estimate(given, work, History(), sysbench_version="1.0.20", build_id={"mariadb-local": "b"})
    assert len(found.datasets) == 1
    assert found.seconds == pytest.approx(sum(i.seconds for i in found.items) + found.overhead_s + found.datasets_s)
    assert "1 dataset(s) to prepare" in line(found)


def test_short_commands_say_nothing(tmp_path: Path):
    said: list[str] = []
    estimates.say(said.append, estimates.estimate(settings(tmp_path), [], History()))
    assert said == []
    given = settings(tmp_path)
    work = [Work(pipeline.resolve(given, "tpcc", "mariadb-local"), "cost", 3)]
    estimates.say(said.append, estimates.estimate(given, work, History()))
    assert len(said) == 1 and said[0].startswith("estimate: about")


def test_stored_durations_price_the_same_runs_exactly(tmp_path: Path):
    from harness.store import open_store

    here = dataclasses.replace(run(1.0).testbed, hostname=platform.node())
    start = run(1.0).started_at
    runs = []
    for i, (offset, seconds) in enumerate(((0, 20), (23, 30), (56, 25))):
        r = dataclasses.replace(
            run(1.0, threads=1), run_id=f"d{i}", testbed=here, group_id="g", kind="cost", scenario="tpcc"
        )
        at = start + timedelta(seconds=offset)
        runs.append(dataclasses.replace(r, started_at=at, finished_at=at + timedelta(seconds=seconds)))
    store = tmp_path / "d.duckdb"
    open_store(store).save_many(runs)
    given = settings(tmp_path)
    history = estimates.recent_history(store)
    (item,) = estimates.estimate(
        given, [Work(pipeline.resolve(given, "tpcc", "mariadb-local"), "cost", 3)], history
    ).items
    assert item.source == "measured (3 runs)"
    assert item.per_run_s == 25.0 + GAP_S  # lower median of 20, 30, 25; gaps 3 and 1 s: too few to use


NO_BASELINE = Outcome(
    runs=(),
    verdicts=(
        Verdict(
            mode="baseline", scenario="tpcc", threads=1, base="baseline", head="mariadb-local", kind="cost",
            metrics=(MetricVerdict("baseline", False, "no_baseline", "no baseline; record one with: x", gating=False),),
        ),
    ),
)  # fmt: skip


def _tpcc_session(tmp_path: Path, *extra: object) -> tuple[object, ...]:
    """pytest arguments for the catalogue's tpcc cases on mariadb-local (quick), with an empty store."""
    return (
        "-p", "no:cacheprovider", "--dbperf-scenarios-dir", REPO / "scenarios", "--dbperf-servers-dir",
        REPO / "servers", "--dbperf-scenario", "tpcc", "--dbperf-server", "mariadb-local", "--dbperf-profile",
        "quick", "--dbperf-store", tmp_path / "none.duckdb", *extra,
    )  # fmt: skip


def test_a_pytest_session_of_several_cases_says_its_estimate_first(pytester: pytest.Pytester, monkeypatch, tmp_path):
    monkeypatch.setattr(Runner, "run_case", lambda self, case: NO_BASELINE)
    pytester.makepyfile(test_scenarios=(REPO / "scenarios" / "test_scenarios.py").read_text())
    args = _tpcc_session(tmp_path, "--dbperf-cache-dir", tmp_path / "cache")
    result = pytester.runpytest_inprocess(*args, "--dbperf-measure-unjudged")
    result.assert_outcomes(skipped=2)
    lines = result.stdout.lines
    (said,) = [i for i, text in enumerate(lines) if text.startswith("dbperf: estimate: about")]
    assert "for 2 scenario case(s)" in lines[said] and "assumed" in lines[said]
    assert said < next(i for i, text in enumerate(lines) if "test_scenarios.py" in text)  # before the first test
    one = pytester.runpytest_inprocess(*args, "--dbperf-measure-unjudged", "-k", "cost")
    assert not [text for text in one.stdout.lines if "estimate:" in text]  # one case: no estimate


def test_a_session_says_first_what_it_cannot_judge(pytester: pytest.Pytester, monkeypatch, tmp_path):
    """``pytest scenarios/ -k tpcc`` with no baseline: one line per case before any runs, with the command
    that records one; no estimate (nothing will be measured)."""
    monkeypatch.setattr(Runner, "run_case", lambda self, case: NO_BASELINE)
    pytester.makepyfile(test_scenarios=(REPO / "scenarios" / "test_scenarios.py").read_text())
    args = _tpcc_session(tmp_path, "--dbperf-baselines-dir", tmp_path / "baselines")
    lines = pytester.runpytest_inprocess(*args).stdout.lines
    said = [i for i, text in enumerate(lines) if text.startswith("dbperf: nothing to judge tpcc")]
    assert len(said) == 2 and not [text for text in lines if "estimate:" in text]
    assert all("record one with: dbperf baseline record --scenario tpcc" in lines[i] for i in said)
    assert any("(cost, 1t)" in lines[i] and "--cost" in lines[i] for i in said)
    assert max(said) < next(i for i, text in enumerate(lines) if "test_scenarios.py" in text)


def test_a_store_whose_lock_is_held_gives_no_history_and_does_not_wait(tmp_path: Path) -> None:
    """The run waits for a held store and says so (tests/faults); the estimate before it must not wait."""
    import fcntl
    import time

    from harness.pipeline.estimates import History, recent_history
    from harness.store import Store

    path = tmp_path / "dbperf.duckdb"
    Store(path).count()  # a real store file
    with (tmp_path / "dbperf.duckdb.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        started = time.monotonic()
        assert recent_history(path, limit_s=0.5) == History()
        assert time.monotonic() - started < 5
