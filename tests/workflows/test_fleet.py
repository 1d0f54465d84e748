"""perf.yml's fleet path, executed by act: a matrix of runner classes writing one shared store.

With the repository variable ``DBPERF_STORE`` naming a real DuckLake (its catalog on a throwaway
PostgreSQL, ``catalog`` in tests/conftest.py, its data folder here), ``DBPERF_FLEET`` two runner
labels (both mapped to this host, like every other label) and ``DBPERF_FLEET_SERVERS`` one server:

* ``push`` to main -> one ``fleet`` job per runner class writes its runs straight into the store, each
  run under its class's testbed; ``fleet-report`` draws the trend site of the whole fleet from the store
  (deployed by ``pages``) and the change-point section of its summary;
* ``schedule`` -> the same with the full profile, over a store that also holds a seeded history with a
  known step (found in the summary), and ``dbperf store maintain`` compacts the store.

The password reaches dbperf only as the secret ``DBPERF_STORE_PASSWORD`` (PGPASSWORD); the store
setting has none. Runs are short (tests/workflows/conftest.py) but real.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from support.actrun import Act, ActRun
from support.catalog import PASSWORD, Catalog
from support.factories import make_testbed
from support.workflows import ScratchRepo, push_event, schedule_event

from harness.model import Metrics, RunResult, Totals
from harness.store import open_store

pytestmark = [pytest.mark.integration, pytest.mark.workflows]

FLEET = ("dbperf-a", "dbperf-b")
SERVER = "mariadb-local"
SCENARIO = "oltp_point_select"
REPETITIONS = 2
SEEDED_COMMITS = 10
SEEDED_STEP = 5
SEED_BED = make_testbed(
    cpu_model="Seed CPU 9000",
    cores=4,
    memory_gb=16.0,
    disk="vdb (ssd)",
    hostname="seed-host",
    hardware_class="dbperf-a",
)


def _explain(run: ActRun) -> str:
    return f"act {run.name} exit {run.exit_code} after {run.seconds:.0f} s; jobs {run.job_results()}\n{run.tail(150)}"


@contextlib.contextmanager
def _password() -> Iterator[None]:
    """PGPASSWORD for this process while it reads the lake (libpq takes it from the environment)."""
    before = os.environ.get("PGPASSWORD")
    os.environ["PGPASSWORD"] = PASSWORD
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PGPASSWORD", None)
        else:
            os.environ["PGPASSWORD"] = before


def _runs(url: str) -> list[RunResult]:
    with _password():
        store = open_store(url)
        try:
            return list(store.runs())
        finally:
            store.close()


@pytest.fixture(scope="module")
def lake(catalog: Catalog) -> Iterator[str]:
    """The shared store: a brand-new lake (catalog database and data folder)."""
    data = Path(tempfile.mkdtemp(prefix="dbperf-fleet-lake-"))
    try:
        yield catalog.new_lake(f"fleet_act_{os.getpid()}", data)
    finally:
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="module")
def fleet_vars(common_vars: dict[str, str], lake: str) -> dict[str, str]:
    return {
        **common_vars,
        "DBPERF_STORE": lake,
        "DBPERF_FLEET": json.dumps(list(FLEET)),
        "DBPERF_FLEET_SERVERS": json.dumps([SERVER]),
        "DBPERF_SCENARIO": SCENARIO,
    }


def _fleet_run(act: Act, name: str, event: str, payload: dict[str, object], **kw: object) -> ActRun:
    return act.run(
        name,
        event,
        payload,
        workflow="perf.yml",
        secrets={"DBPERF_STORE_PASSWORD": PASSWORD},
        labels=FLEET,
        timeout_s=1800,
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def push_run(act: Act, scratch_repo: ScratchRepo, quick_env: dict[str, str], fleet_vars: dict[str, str]) -> ActRun:
    return _fleet_run(
        act,
        "fleet-push",
        "push",
        push_event(scratch_repo),
        variables=fleet_vars,
        env={**quick_env, "DBPERF_REPETITIONS": str(REPETITIONS)},
    )


def _seeded_run(commit: int, rep: int, qps: float) -> RunResult:
    at = datetime(2026, 10, 1, 2, 17, tzinfo=UTC) + timedelta(days=commit, minutes=rep)
    events = int(qps * 60)
    return RunResult(
        run_id=f"fleet-seed-{commit:02d}-{rep}",
        started_at=at,
        finished_at=at + timedelta(seconds=70),
        status="ok",
        server=SERVER,
        flavour="mariadb",
        provider="local",
        server_version="10.11.14-MariaDB",
        config_hash="seeded",
        scenario=SCENARIO,
        scenario_hash="seeded",
        profile="full",
        script=SCENARIO,
        threads=2,
        repetition=rep,
        warmup_s=10,
        time_s=60,
        testbed=SEED_BED,
        git_sha=f"{commit:02d}" + "5eed" * 9 + "ab",
        group_id=f"fleet-seed-{commit:02d}",
        totals=Totals(time_s=60.0, events=events, reads=events, writes=0, other=0, errors=0, reconnects=0),
        metrics=Metrics(qps=qps, tps=qps, p50_ms=0.2, p95_ms=0.4, p99_ms=0.6, cpu_per_txn=400_000.0 / qps),
    )


@pytest.fixture(scope="module")
def schedule_run(
    act: Act, push_run: ActRun, lake: str, quick_env: dict[str, str], fleet_vars: dict[str, str]
) -> ActRun:
    """The nightly, after the push, over a store that also holds earlier nights of another machine of
    class dbperf-a: QPS drops 20 % at its 6th commit."""
    del push_run
    with _password():
        store = open_store(lake)
        try:
            store.save_many(
                [
                    _seeded_run(commit, rep, (8000.0 if commit < SEEDED_STEP else 6400.0) * (1 + 0.004 * rep))
                    for commit in range(SEEDED_COMMITS)
                    for rep in (1, 2)
                ]
            )
        finally:
            store.close()
    return _fleet_run(
        act,
        "fleet-schedule",
        "schedule",
        schedule_event(),
        variables=fleet_vars,
        env={**quick_env, "DBPERF_REPETITIONS": str(REPETITIONS)},
    )


def _check_jobs(run: ActRun) -> None:
    assert run.exit_code == 0, _explain(run)
    results = run.job_results()
    assert sorted(results) == sorted(
        [(f"Fleet history ({label}, {SERVER})", "success") for label in FLEET]
        + [("Fleet trend site and change points", "success"), ("Deploy the trend site", "success")]
    ), _explain(run)


def _check_fleet_runs(runs: list[RunResult], sha: str, profile: str) -> list[RunResult]:
    """Every runner class's runs of this commit and profile are in the store, once, under its own testbed."""
    mine = [r for r in runs if r.git_sha == sha and r.profile == profile]
    assert Counter(r.testbed.hardware_class for r in mine) == dict.fromkeys(FLEET, REPETITIONS), [
        (r.run_id, r.testbed) for r in mine
    ]
    assert all(r.status == "ok" and r.server == SERVER and r.scenario == SCENARIO for r in mine)
    assert all(r.label == "" and r.kind == "time" for r in mine)
    # nothing duplicated: one run per class x repetition, distinct ids; each class one testbed of its own
    assert len({r.run_id for r in mine}) == len(mine)
    assert sorted(Counter((r.testbed.hardware_class, r.repetition) for r in mine).values()) == [1] * len(mine)
    beds = {
        r.testbed.hardware_class: {
            x.testbed.fingerprint for x in mine if x.testbed.hardware_class == r.testbed.hardware_class
        }
        for r in mine
    }
    assert all(len(fps) == 1 for fps in beds.values()) and len(set.union(*beds.values())) == len(FLEET), beds
    assert len({r.group_id for r in mine}) == len(FLEET)  # one group per job
    return mine


def _site(run: ActRun) -> Path:
    """The trend site as the upload-pages-artifact stand-in received it, unpacked next to the artifact."""
    tar = run.artifact("github-pages") / "artifact.tar"
    assert tar.is_file(), _explain(run)
    out = tar.parent / "unpacked"
    if not out.exists():
        with tarfile.open(tar) as archive:
            archive.extractall(out, filter="data")
    return out


def test_push_writes_every_runner_class_into_the_shared_store(
    push_run: ActRun, scratch_repo: ScratchRepo, lake: str
) -> None:
    _check_jobs(push_run)
    summary = push_run.summary("fleet")
    for label in FLEET:
        assert f"### dbperf fleet run: {SERVER} on {label} (ci profile)\n- {SCENARIO}: ok" in summary, summary
    runs = _runs(lake)
    _check_fleet_runs(runs, scratch_repo.main_sha, "ci")
    assert len(runs) == len(FLEET) * REPETITIONS, [(r.run_id, r.profile, r.git_sha) for r in runs]
    # the password never travelled in the setting; every step of the fleet jobs got it as PGPASSWORD only
    assert PASSWORD not in lake
    steps = [s for s in push_run.step_envs() if s.job in ("fleet", "fleet-report")]
    assert steps and all(s.variables.get("PGPASSWORD") == PASSWORD for s in steps)
    assert all(s.variables.get("DBPERF_STORE") == lake for s in steps)


def test_push_draws_the_fleet_trend_site_from_the_store(push_run: ActRun) -> None:
    _check_jobs(push_run)
    summary = push_run.summary("fleet-report")
    assert "backend: DuckLake (shared)" in summary and f"runs: {len(FLEET) * REPETITIONS}" in summary, summary
    assert f"testbeds: {len(FLEET)}" in summary, summary
    assert "### Fleet change points (one series per server and testbed)" in summary, summary
    assert re.search(r"wrote site/index\.html in [\d.]+ s: 4 ok runs, 2 commit points, 0 change point", summary)
    site = _site(push_run)
    assert (site / "index.html").is_file() and json.loads((site / "changes.json").read_text()) == []
    # one line per server and runner class: the classes never share a series
    page = (site / "index.html").read_text()
    for label in FLEET:
        line = f"{SERVER} · {label} ("
        assert line in page or json.dumps(line)[1:-1] in page, f"no line for {label} on the trend site"
    assert (push_run.pages() / "index.html").is_file()  # deployed by the pages job
    assert "Shared store maintenance" not in summary  # only the nightly compacts the store


def test_nightly_finds_the_fleets_change_points_and_compacts_the_store(
    schedule_run: ActRun, scratch_repo: ScratchRepo, lake: str
) -> None:
    _check_jobs(schedule_run)
    summary = schedule_run.summary("fleet")
    for label in FLEET:
        assert f"### dbperf fleet run: {SERVER} on {label} (full profile)\n- {SCENARIO}: ok" in summary, summary
    runs = _runs(lake)
    _check_fleet_runs(runs, scratch_repo.main_sha, "full")
    push = _check_fleet_runs(runs, scratch_repo.main_sha, "ci")  # the push's runs: still there, once
    seeded = [r for r in runs if r.run_id.startswith("fleet-seed-")]
    assert len(seeded) == SEEDED_COMMITS * 2
    assert len(runs) == len(push) + len(FLEET) * REPETITIONS + len(seeded)
    report = schedule_run.summary("fleet-report")
    assert f"runs: {len(runs)}" in report and f"testbeds: {len(FLEET) + 1}" in report, report
    # the seeded class-a machine's step is found, in a series of its own (its testbed's label)
    section = report.split("### Fleet change points (one series per server and testbed)", 1)[1]
    changes = json.loads((_site(schedule_run) / "changes.json").read_text())
    seeded_changes = [
        c for c in changes if c["testbed"].startswith("dbperf-a") and c["series_length"] == SEEDED_COMMITS
    ]
    assert {c["metric"] for c in seeded_changes} >= {"qps"}, changes
    qps = next(c for c in seeded_changes if c["metric"] == "qps")
    assert -25 < qps["change_pct"] < -15 and qps["point"].startswith(f"{SEEDED_STEP:02d}5eed"), qps
    assert f"- {SCENARIO} {qps['line']} 2t qps: {qps['change_pct']:+.1f} % at {qps['point'][:12]}" in section
    # dbperf store maintain ran and said what it did
    assert re.search(r"### Shared store maintenance\n\nflush inlined rows [\d.]+ s; merge small files", report), report
    assert (schedule_run.pages() / "index.html").is_file()
