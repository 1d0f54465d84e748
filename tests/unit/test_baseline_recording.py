"""What ``dbperf baseline record`` replaces: the same build and configuration, from as many runs, is kept
unless forced and said in a note; anything else (a recording of more runs too) is replaced and said
(harness/pipeline/recording.py), from synthetic runs and real baseline files."""

from __future__ import annotations

import json
from pathlib import Path

from support.factories import TESTBED, cost_run, run, scenario

from harness.judge.baseline_writer import write_baseline
from harness.model import Server
from harness.pipeline.cases import Case
from harness.pipeline.recording import before_notes, kept_note, write_all

REPO = Path(__file__).resolve().parents[2]


def cost_runs(**kwargs: object) -> list:
    return [cost_run(42_000 + i, **kwargs) for i in range(3)]  # type: ignore[arg-type]


def test_the_same_build_and_configuration_is_kept(tmp_path: Path):
    path = write_baseline(tmp_path, cost_runs())
    before = path.read_text()
    done = write_all(tmp_path, [cost_runs()], force=False)
    assert done.paths == () and [k.path for k in done.kept] == [path] and done.notes == ()
    assert path.read_text() == before
    line = kept_note(done.kept, "G1")
    assert line.startswith(f"kept the cost baseline {path}: recorded for the same build and configuration")
    assert "--force" in line and "build build-a" in line and "configuration req-a" in line and "group G1" in line


def test_force_replaces_it_and_says_so(tmp_path: Path):
    path = write_baseline(tmp_path, cost_runs())
    old_ids = json.loads(path.read_text())["provenance"]["run_ids"]
    again = cost_runs()
    done = write_all(tmp_path, [again], force=True)
    assert done.paths == (path,) and done.kept == ()
    assert json.loads(path.read_text())["provenance"]["run_ids"] == [r.run_id for r in again] != old_ids
    (note,) = done.notes
    assert note.startswith(f"replaced the cost baseline {path} (recorded ") and "--force" in note and "git diff" in note


def test_another_configuration_or_build_replaces_it_naming_what_changed(tmp_path: Path):
    write_baseline(tmp_path, cost_runs())
    (note,) = write_all(tmp_path, [cost_runs(requested_hash="req-b")], force=False).notes
    assert "configuration req-a -> req-b" in note
    (note,) = write_all(tmp_path, [cost_runs(requested_hash="req-b", build_id="build-b")], force=False).notes
    assert "build build-a -> build-b" in note and "configuration" not in note.split(";")[1]


def test_timing_baselines_follow_the_same_rule(tmp_path: Path):
    write_baseline(tmp_path, [run(100.0 + i) for i in range(3)])
    assert len(write_all(tmp_path, [[run(90.0 + i) for i in range(3)]], force=False).kept) == 1
    other = write_all(tmp_path, [[run(90.0 + i, config_hash="cfg-2") for i in range(3)]], force=False)
    assert len(other.paths) == 1 and "configuration cfg -> cfg-2" in other.notes[0]


def test_a_recording_of_more_runs_replaces_one_of_fewer(tmp_path: Path):
    """The gate's suggested recording (more timing runs than the file holds) is what was asked for: written,
    without --force; a recording of fewer runs than the file keeps it."""
    path = write_baseline(tmp_path, [run(100.0)])
    more = write_all(tmp_path, [[run(90.0 + i) for i in range(6)]], force=False)
    assert more.paths == (path,) and more.kept == ()
    assert "1 -> 6 runs" in more.notes[0] and len(json.loads(path.read_text())["provenance"]["run_ids"]) == 6
    fewer = write_all(tmp_path, [[run(80.0 + i) for i in range(3)]], force=False)
    assert fewer.paths == () and [k.path for k in fewer.kept] == [path]


def test_an_unreadable_file_is_replaced(tmp_path: Path):
    path = write_baseline(tmp_path, cost_runs())
    path.write_text("{")
    done = write_all(tmp_path, [cost_runs()], force=False)
    assert done.paths == (path,) and done.notes == (f"replaced the unreadable cost baseline {path}",)


def test_the_committed_cost_baseline_is_named_before_anything_runs():
    server = Server(name="mariadb-local", flavour="mariadb", version="10.11", provider="local", binary="mariadbd")
    case = Case(server, scenario(profile="quick"))
    (note,) = before_notes(REPO / "baselines", TESTBED, case, {"cost": (1,), "time": (1,)})
    committed = REPO / "baselines" / "cost" / "mariadb-local" / "oltp_point_select" / "quick" / "1t.json"
    assert note.startswith(f"{committed} exists (recorded 2026-")
    assert "replaced only if these runs have another build or configuration, or more runs, or with --force" in note


def test_repetitions_say_what_each_kind_gets(capsys):
    from harness.cli.gate_cmds import repetitions_note
    from harness.config.settings import resolve_settings

    point = scenario(profile="quick")
    repetitions_note(resolve_settings({"repetitions": "8"}, root=REPO, environ={}), [point])
    note = capsys.readouterr().err.strip()
    assert note == (
        "note: --repetitions 8 sets the timing runs; cost runs: 3 per thread count, their scenario's [cost] "
        "repetitions (counts repeat to about 0.01 %); --cost --repetitions N sets those"
    )
    for flags in ({"repetitions": "8", "cost": True}, {"repetitions": "8", "cost": False}, {}):
        repetitions_note(resolve_settings(flags, root=REPO, environ={}), [point])  # nothing ignored: silent
        assert capsys.readouterr().err == ""


def test_recording_beside_a_kept_cost_baseline_exits_0_with_a_note(tmp_path: Path, monkeypatch):
    """The README's `baseline record --repetitions 8` beside the committed cost baseline of the same build:
    the timing baseline is written, the cost one kept, and the outcome is a note, not an error (issue 39)."""
    from types import SimpleNamespace

    from harness.config.settings import resolve_settings
    from harness.measure.session import Ledger
    from harness.pipeline import flow

    committed = write_baseline(tmp_path, cost_runs())
    timing = [run(100.0 + i, threads=2) for i in range(8)]
    unbuilt = SimpleNamespace(build_id="", snapshot_key="")  # a setup whose build cannot be read
    session = SimpleNamespace(testbed=TESTBED, ledger=Ledger(), sysbench_version="", setup=lambda *_: unbuilt)
    monkeypatch.setattr(flow, "_session", lambda *_: session)
    monkeypatch.setattr(flow, "measure_case", lambda _s, _c, *, kind, **_: cost_runs() if kind == "cost" else timing)
    settings = resolve_settings({"baselines-dir": str(tmp_path)}, root=REPO, environ={})
    server = Server(name="mariadb-local", flavour="mariadb", version="10.11", provider="local", binary="mariadbd")
    point = scenario(profile="quick", threads=(2,), repetitions=8)
    notes: list[str] = []
    outcome = flow.record(settings, Case(server, point), SimpleNamespace(phase=notes.append))  # type: ignore[arg-type]
    assert outcome.exit_code == 0 and outcome.error == ""
    assert [p.name for p in outcome.written] == ["2t.json"]
    (kept,) = [w for w in outcome.warnings if w.startswith("kept the cost baseline")]
    assert str(committed) in kept and "--force" in kept
    assert not any("timing baseline has" in w for w in outcome.warnings)  # 8 runs are enough
