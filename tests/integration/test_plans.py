"""Plans on a real MariaDB (mariadb-local): a setting that changes a sysbench plan is reported, A/A is not.

``optimizer_max_sel_arg_weight=1`` makes MariaDB's range optimizer give up on select_random_points'
10-value ``k IN (...)`` list: the range scan of index ``k_1`` becomes a full table scan. (Found by
trying settings: ``eq_range_index_dive_limit=1`` moves the rows estimate of the same statement from
about 10 to 20, right at the 2x factor, so not every capture reports it; no setting tried changed a plan
of oltp_read_only.) Each check starts two servers and runs 100 transactions: about 5-15 s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import pipeline
from harness.measure.plan_capture import check_plans
from harness.measure.session import QuietReporter, Session

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def session(settings_factory: Callable[..., object], tmp_path_factory: pytest.TempPathFactory) -> Session:
    store = tmp_path_factory.mktemp("plans") / "store.duckdb"
    settings = settings_factory(store, profile="quick")
    return pipeline.open_session(settings, QuietReporter(), containers=False, check=False)  # type: ignore[arg-type]


def test_a_changed_plan_is_reported_and_the_same_config_reports_none(
    session: Session, settings_factory: Callable[..., object], tmp_path: Path
) -> None:
    settings = settings_factory(tmp_path / "store.duckdb", profile="quick")
    case = pipeline.resolve(settings, "select_random_points", "mariadb-local")  # type: ignore[arg-type]
    head = case.server.with_variables({"optimizer_max_sel_arg_weight": "1"})

    changed = check_plans(session, case.server, case.scenario, head, case.scenario)
    assert changed.note == "", changed.note
    assert [s.template for s in changed.statements] == ["SELECT id, k, c, pad FROM sbtest# WHERE k IN (?+)"]
    assert len(changed.changed) == 1, changed
    (statement,) = changed.changed
    assert statement.base is not None and statement.head is not None
    base, head_access = statement.base.tables[0], statement.head.tables[0]
    assert (base.table, base.access_type, base.key) == ("sbtest1", "range", "k_1")
    assert (head_access.table, head_access.access_type, head_access.key) == ("sbtest1", "ALL", "")
    assert statement.changes[:2] == ("sbtest1: access range → ALL", "sbtest1: key k_1 → none")
    assert changed.base_version.startswith("10.11") and changed.head_version == changed.base_version

    same = check_plans(session, case.server, case.scenario, case.server, case.scenario)
    assert len(same.statements) == 1 and same.changed == (), same


def test_a_write_scenario_captures_every_statement_and_leaves_the_snapshot_alone(
    session: Session, settings_factory: Callable[..., object], tmp_path: Path
) -> None:
    settings = settings_factory(tmp_path / "store.duckdb", profile="quick")
    case = pipeline.resolve(settings, "oltp_read_write", "mariadb-local")  # type: ignore[arg-type]
    snapshot = session.provisioner().snapshot(session.setup(case.server, case.scenario))
    assert snapshot is not None
    before = _digest(snapshot.datadir)
    first = check_plans(session, case.server, case.scenario, case.server, case.scenario)
    assert len(first.statements) == 9 and first.changed == (), first
    assert {s.template.split()[0] for s in first.statements} == {"SELECT", "UPDATE", "DELETE", "INSERT"}
    assert _digest(snapshot.datadir) == before  # 200 write transactions ran on private copies only


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
