"""Runs of a configuration that is not the committed one (``--head-var``, an uncommitted tree) are
recorded as such and never join the main trend series; a real DuckDB store and a real git checkout."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support.factories import run, scenario

from harness.config.settings import Settings, uncommitted_changes
from harness.measure.context import RunContext, build_result
from harness.model import RunResult, Server
from harness.model.history import one_off_label, one_off_note, uncommitted_note
from harness.pipeline import changes, history
from harness.store import Store

BASE = Server(name="mariadb-local", flavour="mariadb", version="10.11", provider="local")
ONE_OFF = {"innodb_flush_log_at_trx_commit": "1"}


def _commit_runs(
    qps: float, commit: int, *, server: str = "mariadb-local", notes: tuple[str, ...] = ()
) -> list[RunResult]:
    out = []
    for rep in range(3):
        base = run(qps * (1 + 0.001 * rep), server=server)
        out.append(
            dataclasses.replace(
                base,
                run_id=f"{server}-{commit}-{rep}-{len(notes)}",
                git_sha=f"{commit:040x}",
                started_at=base.started_at.replace(day=1 + commit, hour=rep + (12 if notes else 0)),
                finished_at=base.finished_at.replace(day=1 + commit),
                notes=notes,
            )
        )
    return out


@pytest.fixture
def stored(tmp_path: Path) -> Store:
    """12 commits at 1,000 QPS on the committed configuration, a step to 800 from commit 6; on commit 3 an
    uncommitted tree at 5,000 QPS and a ``--head-var`` head at 3,000 QPS (the same commit)."""
    store = Store(tmp_path / "dbperf.duckdb")
    runs = [r for c in range(12) for r in _commit_runs(1000.0 if c < 6 else 800.0, c)]
    runs += _commit_runs(5000.0, 3, notes=(uncommitted_note(f"{3:040x}"),))
    head = BASE.with_variables(ONE_OFF)
    runs += _commit_runs(3000.0, 3, server=head.name, notes=(one_off_note(head.one_off),))
    store.save_many(runs)
    return store


def test_notes_name_what_sets_a_run_apart() -> None:
    head = BASE.with_variables(ONE_OFF)
    assert head.name == "mariadb-local+innodb_flush_log_at_trx_commit=1"
    assert head.one_off == ONE_OFF and BASE.one_off == {}
    assert one_off_label((one_off_note(head.one_off),)) == "one-off: innodb_flush_log_at_trx_commit=1"
    assert one_off_label((uncommitted_note("ab" * 20),)) == "uncommitted tree"
    both = (one_off_note({"b": "2", "a": "1"}), "still warming up", uncommitted_note(""))
    assert one_off_label(both) == "one-off: a=1,b=2 · uncommitted tree"
    assert one_off_label('["one-off: x=1 — set for this invocation only"]') == "one-off: x=1"  # the store's JSON
    assert one_off_label(("still warming up", "one-off without the separator")) == ""
    assert one_off_label("not json") == "" and one_off_label(None) == ""
    # an A/A head is renamed, not modified: its runs stay committed configurations
    assert BASE.with_variables({}, name="mariadb-local(A/A)").one_off == {}


def test_a_run_of_a_head_var_server_carries_its_note() -> None:
    head = BASE.with_variables(ONE_OFF)
    from datetime import UTC, datetime

    from support.factories import TESTBED

    ctx = RunContext(head, scenario(), 1, 1, TESTBED, "ab" * 20)
    failed = build_result(ctx, datetime.now(UTC), failure="server died", notes=("other note",))
    assert failed.notes == (one_off_note(ONE_OFF), "other note")
    plain = build_result(RunContext(BASE, scenario(), 1, 1, TESTBED, ""), datetime.now(UTC), failure="x")
    assert plain.notes == ()


def test_one_off_runs_are_drawn_apart_and_never_in_change_points(stored: Store) -> None:
    data = history(stored.metrics_table())
    points = data.points.to_pylist()
    main = [p for p in points if p["oneoff"] == ""]
    apart = {p["line"]: p for p in points if p["oneoff"]}
    assert len(main) == 12 and all(p["n"] == 3 for p in main)  # commit 3 keeps its 3 committed runs only
    assert max(p["qps"] for p in main) < 1100  # neither 5,000 nor 3,000 QPS joined the main series
    assert set(apart) == {
        "mariadb-local · uncommitted tree",
        "mariadb-local · one-off: innodb_flush_log_at_trx_commit=1",
    }
    assert {p["server"] for p in points} == {"mariadb-local"}  # the head-var runs are filed under their server
    assert data.servers == ["mariadb-local"]
    assert round(apart["mariadb-local · uncommitted tree"]["qps"]) == 5005
    # the step is found on the main series alone, and nothing is found on the one-off points
    assert [(m.line, m.point) for m in data.changes if m.metric == "qps"] == [("mariadb-local", f"{6:040x}")]
    versions = {(v["line"], v["oneoff"]) for v in data.versions.to_pylist()}
    assert ("mariadb-local", "") in versions and len(versions) == 3
    scaling = {(s["line"], s["n"]) for s in data.scaling.to_pylist()}
    assert ("mariadb-local", 36) in scaling and ("mariadb-local · uncommitted tree", 3) in scaling


def test_dbperf_changes_sees_only_the_committed_history(stored: Store) -> None:
    found = changes(stored.metrics_table(), ["qps"])
    assert [(s.server, s.points, len(s.changes)) for s in found] == [("mariadb-local", 12, 1)]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_uncommitted_changes_follows_git_describe_dirty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBPERF_GIT_SHA", raising=False)
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    assert not uncommitted_changes(tmp_path)  # no git checkout
    _git(tmp_path, "init", "-q")
    (tmp_path / "servers.toml").write_text("a = 1\n")
    _git(tmp_path, "add", "servers.toml")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    assert not uncommitted_changes(tmp_path)
    (tmp_path / "scratch.txt").write_text("untracked files do not count\n")
    assert not uncommitted_changes(tmp_path)
    (tmp_path / "servers.toml").write_text("a = 2\n")
    assert uncommitted_changes(tmp_path)
    monkeypatch.setenv("DBPERF_GIT_SHA", "c" * 40)  # the caller names the commit: it vouches for the tree
    assert not uncommitted_changes(tmp_path)


def test_a_session_opened_in_an_uncommitted_tree_notes_it_for_every_run(
    settings_factory: Callable[..., object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real session opener (sysbench, the store) in a checkout with a changed tracked file: the
    warning is said once and is what every run's notes carry (timing and cost runs take the ledger's)."""
    from harness import pipeline
    from harness.config.settings import current_git_sha
    from harness.measure.session import QuietReporter

    monkeypatch.delenv("DBPERF_GIT_SHA", raising=False)
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / "my.cnf").write_text("[mysqld]\n")
    _git(project, "add", "my.cnf")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    made = settings_factory(tmp_path / "store.duckdb")
    assert isinstance(made, Settings)
    settings = dataclasses.replace(made, root=project)
    clean = pipeline.open_session(settings, QuietReporter(), containers=False, check=False)
    assert clean.git_sha == current_git_sha(project) and clean.ledger.warnings == []
    (project / "my.cnf").write_text("[mysqld]\nmax_connections = 10\n")
    dirty = pipeline.open_session(settings, QuietReporter(), containers=False, check=False)
    assert dirty.ledger.warnings == [uncommitted_note(clean.git_sha)]
    assert one_off_label(tuple(dirty.ledger.warnings)) == "uncommitted tree"
