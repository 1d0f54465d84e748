"""A gate with nothing to judge against says so before it runs, and measures nothing
(harness/pipeline/judgeable.py). Before this, ``pytest scenarios/ -k tpcc`` measured for 13 minutes and
then skipped both cases for want of a baseline (issue 33, item 5)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.factories import TESTBED, Said

from harness import pipeline
from harness.config.settings import resolve_settings
from harness.dataset import DatasetCache
from harness.judge.baselines import load_baseline
from harness.measure.session import Session
from harness.model import RunResult
from harness.pipeline import flow
from harness.pipeline.judgeable import reason_before

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "baselines" / "cost" / "mariadb-local" / "oltp_point_select" / "quick" / "1t.json"


def settings(tmp_path: Path, **flags: object):  # type: ignore[no-untyped-def]
    base = {"scenarios-dir": REPO / "scenarios", "servers-dir": REPO / "servers", "profile": "quick"}
    return resolve_settings({**base, "baselines-dir": tmp_path / "baselines", **flags}, root=REPO)


def test_what_is_known_before_a_run_decides_whether_a_baseline_can_judge(tmp_path: Path):
    case = pipeline.resolve(settings(tmp_path), "oltp_point_select", "mariadb-local")
    found = dataclasses.replace(load_baseline(COMMITTED), scenario_hash=case.scenario.cost_hash, build_id="b1")
    assert reason_before(found, case.scenario, "cost", "b1") is None
    assert reason_before(found, case.scenario, "cost", "") is None  # a build-id that cannot be read: after the runs
    other = reason_before(found, case.scenario, "cost", "b2")
    assert other is not None and "another server build" in other and "dbperf compare" in other
    changed = reason_before(dataclasses.replace(found, scenario_hash="0ld"), case.scenario, "cost", "b1")
    assert changed is not None and "scenario definition changed" in changed
    assert (
        reason_before(None, case.scenario, "cost", "b1") == "no cost baseline for quick profile runs of this scenario"
    )


def _session(tmp_path: Path, said: Said, monkeypatch: pytest.MonkeyPatch) -> Session:
    built = SimpleNamespace(server_build="b1")  # the server setup's build-id, the one field the gate reads here
    monkeypatch.setattr(Session, "setup", lambda self, server, scenario, cost=False: built)
    return Session(DatasetCache(tmp_path / "cache"), TESTBED, "sha", lambda run: None, reporter=said)  # type: ignore[arg-type]


def test_a_gate_with_nothing_to_judge_against_measures_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def measured(*args: object, **kwargs: object) -> list[RunResult]:
        raise AssertionError("nothing should be measured")

    monkeypatch.setattr(flow, "measure_case", measured)
    said = Said()
    given = settings(tmp_path)
    cases = [pipeline.resolve(given, "tpcc", "mariadb-local")]
    outcome = pipeline.gate(given, cases, said, session=_session(tmp_path, said, monkeypatch))
    assert outcome.runs == () and outcome.exit_code == 0
    assert {(v.kind, v.metrics[0].outcome) for v in outcome.verdicts} == {
        ("time", "no_baseline"),
        ("cost", "no_baseline"),
    }
    notes = [line for line in said.lines if line.startswith("note: nothing to judge tpcc")]
    assert len(notes) == 2  # one line per kind, each with the recording that makes one
    assert any("(cost, 1t)" in n and "record one with: dbperf baseline record --scenario tpcc" in n for n in notes)
    assert all("--profile quick" in n for n in notes)


def test_a_gate_with_something_to_judge_says_what_it_cannot_before_measuring(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The committed cost baseline judges the cost runs; the timing side has none: said first, measured still."""
    said = Said()
    given = settings(tmp_path)
    case = pipeline.resolve(given, "oltp_point_select", "mariadb-local")
    target = tmp_path / "baselines" / "cost" / "mariadb-local" / "oltp_point_select" / "quick" / "1t.json"
    target.parent.mkdir(parents=True)
    text = COMMITTED.read_text()
    target.write_text(text.replace(load_baseline(COMMITTED).scenario_hash, case.scenario.cost_hash).replace(
        load_baseline(COMMITTED).build_id, "b1"
    ))  # fmt: skip
    measured: list[str] = []

    def measure(session: Session, c: pipeline.Case, *, kind: str = "time", **kwargs: object) -> list[RunResult]:
        measured.append(f"{kind} after {len(said.lines)} lines")
        return []

    monkeypatch.setattr(flow, "measure_case", measure)
    pipeline.gate(given, [case], said, session=_session(tmp_path, said, monkeypatch))
    (note,) = [line for line in said.lines if line.startswith("note: nothing to judge")]
    assert "(timing, 2t)" in note and "--no-cost" in note
    assert [m.split()[0] for m in measured] == ["time", "cost"]
    assert int(measured[0].split()[2]) >= said.lines.index(note) + 1  # the note came before the first run
