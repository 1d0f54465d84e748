"""Plans: templates from a real general log, EXPLAIN FORMAT=JSON of three servers, comparison, rendering.

The documents in tests/data/explain/ were captured from real servers (MariaDB 10.11 local, the 11.8 and
MySQL 9.7 containers) running three oltp_read_write transactions with the general log on: ``logged``
is what the log held, ``explain`` each template's example EXPLAINed (MySQL: ``explain_v1`` in format 1,
``explain`` in its default format 2), plus one three-table join with a subquery. Golden files are
regenerated with ``DBPERF_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.comments import ci_check, example_check, verdicts_json
from support.reports import check

from harness.errors import ServerError
from harness.model import Outcome
from harness.model.plan_changes import compare_statement, differences, rows_changed
from harness.model.query_plan import PlanCheck, QueryPlan, TableAccess
from harness.report.comment import render_comment
from harness.report.markdown import render_markdown
from harness.report.plan_findings import plans_markdown, print_plans
from harness.servers.query_plans import examples, explainable, parse_plan, template

DATA = Path(__file__).resolve().parents[1] / "data"
GOLDEN = DATA / "golden"
SERVERS = ("mariadb-10.11", "mariadb-11.8", "mysql-9.7")
JOIN = "SELECT b.pad, COUNT(*) FROM sbtest1 a JOIN sbtest2 b"
TEMPLATES = [
    "SELECT c FROM sbtest# WHERE id=?",
    "SELECT c FROM sbtest# WHERE id BETWEEN ? AND ?",
    "SELECT SUM(k) FROM sbtest# WHERE id BETWEEN ? AND ?",
    "SELECT c FROM sbtest# WHERE id BETWEEN ? AND ? ORDER BY c",
    "SELECT DISTINCT c FROM sbtest# WHERE id BETWEEN ? AND ? ORDER BY c",
    "UPDATE sbtest# SET k=k+? WHERE id=?",
    "UPDATE sbtest# SET c=? WHERE id=?",
    "DELETE FROM sbtest# WHERE id=?",
    "INSERT INTO sbtest# (id, k, c, pad) VALUES (?+)",
]


def captured(server: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "explain" / f"{server}-oltp_read_write.json").read_text())
    return data


def plans_of(server: str, key: str = "") -> dict[str, QueryPlan]:
    """Template -> plan; the MySQL documents in format 1 unless ``key`` says otherwise."""
    doc = captured(server)
    key = key or ("explain_v1" if doc["explain_v1"] else "explain")
    return {template(sql): parse_plan(text) for sql, text in doc[key].items()}


@pytest.mark.parametrize("server", SERVERS)
def test_the_general_log_gives_one_example_per_template(server: str) -> None:
    logged = captured(server)["logged"]
    assert "BEGIN" in logged and "COMMIT" in logged  # not explainable: left out
    found = examples(logged)
    assert list(found) == TEMPLATES
    assert found["SELECT c FROM sbtest# WHERE id=?"] == next(s for s in logged if s.startswith("SELECT c FROM"))


def test_templates_fold_literals_lists_and_table_numbers() -> None:
    assert (
        template("SELECT c FROM sbtest12 WHERE id = -5 AND c = 'it''s' ; ")
        == "SELECT c FROM sbtest# WHERE id = ? AND c = ?"
    )
    assert template("SELECT id FROM sbtest3 WHERE k IN (1, 2,3)") == "SELECT id FROM sbtest# WHERE k IN (?+)"
    assert template("INSERT INTO t1 VALUES (1, 'a'), (2, 'b')") == "INSERT INTO t# VALUES (?+)..."
    assert template("SELECT s_dist_01 FROM stock2") == "SELECT s_dist_# FROM stock#"
    assert explainable("  (SELECT 1)") and explainable("with x as (select 1) select * from x")
    assert not explainable("SET autocommit=0") and not explainable("COMMIT") and not explainable("")


@pytest.mark.parametrize("server", SERVERS)
def test_each_server_plans_sysbench_statements_alike(server: str) -> None:
    plans = plans_of(server)
    point = plans["SELECT c FROM sbtest# WHERE id=?"]
    assert point.tables == (TableAccess("sbtest2", "const", "PRIMARY", 1.0),)
    ranges = plans["SELECT c FROM sbtest# WHERE id BETWEEN ? AND ?"]
    assert ranges.tables == (TableAccess("sbtest1", "range", "PRIMARY", 100.0),)
    assert not ranges.filesort and not ranges.temporary
    ordered = plans["SELECT c FROM sbtest# WHERE id BETWEEN ? AND ? ORDER BY c"]
    assert ordered.filesort and not ordered.temporary
    distinct = plans["SELECT DISTINCT c FROM sbtest# WHERE id BETWEEN ? AND ? ORDER BY c"]
    assert distinct.filesort and distinct.temporary
    for dml in ("UPDATE sbtest# SET k=k+? WHERE id=?", "DELETE FROM sbtest# WHERE id=?"):
        assert plans[dml].tables[0].access_type == "range" and plans[dml].tables[0].rows == 1.0
    assert plans["INSERT INTO sbtest# (id, k, c, pad) VALUES (?+)"].tables == (TableAccess("sbtest1"),)


def test_mysql_format_2_is_read_too() -> None:
    plans = plans_of("mysql-9.7", "explain")
    ranges = plans["SELECT c FROM sbtest# WHERE id BETWEEN ? AND ?"]
    assert ranges.tables == (TableAccess("sbtest1", "index_range_scan", "PRIMARY", 100.0),)
    distinct = plans["SELECT DISTINCT c FROM sbtest# WHERE id BETWEEN ? AND ? ORDER BY c"]
    assert distinct.filesort and distinct.temporary
    join = next(p for sql, p in plans.items() if sql.startswith(template(JOIN)))
    assert [t.table for t in join.tables] == ["<temporary>", "a", "<subquery2>", "sbtest1", "b"]


def test_join_order_and_materialised_subquery() -> None:
    def join(server: str) -> QueryPlan:
        return next(p for sql, p in plans_of(server).items() if sql.startswith(template(JOIN)))

    old, new, mysql = join("mariadb-10.11"), join("mariadb-11.8"), join("mysql-9.7")
    assert [t.table for t in old.tables] == ["a", "b", "<subquery2>", "sbtest1"]
    assert old.tables[2] == TableAccess("<subquery2>", "eq_ref", "distinct_key", 1.0)
    assert [t.table for t in new.tables] == ["a", "b", "sbtest1"]  # 11.8: first match, no materialisation
    assert [t.table for t in mysql.tables] == ["<subquery2>", "sbtest1", "a", "b"]
    assert differences(old, new) == ("tables a, b, <subquery2>, sbtest1 → a, b, sbtest1",)
    assert old.filesort and old.temporary and new.filesort and new.temporary


def test_sysbench_plans_agree_between_mariadb_10_11_and_11_8() -> None:
    old, new = plans_of("mariadb-10.11"), plans_of("mariadb-11.8")
    for name in TEMPLATES:
        assert differences(old[name], new[name]) == (), name


def test_not_json_is_one_line() -> None:
    with pytest.raises(ServerError, match="not JSON"):
        parse_plan("id\tselect_type")


def test_differences_in_words() -> None:
    base = QueryPlan((TableAccess("sbtest1", "range", "k_1", 829.0),))
    assert differences(base, QueryPlan((TableAccess("sbtest1", "range", "k_1", 20.0),))) == (
        "sbtest1: rows 829 → 20 (41.5x fewer)",
    )
    assert differences(base, QueryPlan((TableAccess("sbtest1", "ALL", "", 9_800.0),), filesort=True)) == (
        "sbtest1: access range → ALL",
        "sbtest1: key k_1 → none",
        "sbtest1: rows 829 → 9,800 (11.8x)",
        "filesort added",
    )
    two = QueryPlan((TableAccess("a", "ALL", "", 100.0), TableAccess("b", "eq_ref", "PRIMARY", 1.0)), temporary=True)
    swapped = QueryPlan((TableAccess("b", "ALL", "", 100.0), TableAccess("a", "eq_ref", "PRIMARY", 1.0)))
    assert differences(two, swapped)[0] == "join order a, b → b, a"
    assert "temporary table removed" in differences(two, swapped)
    assert differences(two, two) == ()


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        (100, 99, False),
        (100, 51, False),
        (100, 50, True),
        (1, 3, False),
        (1, 10, True),
        (0, 20, True),
        (None, 5, False),
    ],
)
def test_rows_factor_and_floor(before: float | None, after: float | None, changed: bool) -> None:
    assert rows_changed(before, after) is changed


def test_a_refused_explain_is_a_change_on_one_side_only() -> None:
    plan = QueryPlan((TableAccess("t", "ALL", "", 5.0),))
    one = compare_statement("SELECT ?", "SELECT 1", plan, "(1146, \"Table 'sbtest.t' doesn't exist\")")
    assert one.changes == ("EXPLAIN refused on head",) and one.head is None and "1146" in one.head_error
    assert compare_statement("SELECT ?", "SELECT 1", "no", "no").changes == ()


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("DBPERF_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"{path} is missing: regenerate with DBPERF_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{name} differs from the golden file; if intended, regenerate"


def test_markdown_section_golden() -> None:
    unchecked = PlanCheck("oltp_point_select", "staging", "staging+x=1", note="plans not compared: external")
    check_golden("plans_markdown.md", "\n".join(plans_markdown([example_check(), unchecked])))
    assert plans_markdown([]) == []
    report = render_markdown(check((), (), plans=[example_check()]))
    assert "| sbtest1 | range | k_1 | 829 | range | k_1 | 20 |" in report


def test_comment_shows_changed_plans_and_shortens_them_first() -> None:
    comment = render_comment(check((), (), plans=[example_check()]))
    assert "🔀 select_random_points: mariadb-local vs mariadb-local+eq_range_index_dive_limit=1" in comment
    assert "sbtest1: rows 829 → 20 (41.5x fewer)" in comment
    assert "| sbtest1 | range | k_1 | 829 | range | k_1 | 20 |" in comment
    short = render_comment(check((), (), plans=[example_check()]), limit=len(comment) - 50)
    assert "1 more changed plan(s) in the full report" in short
    assert "🔀" not in render_comment(check((), ()))


def test_terminal_section() -> None:
    out = io.StringIO()
    print_plans([example_check()], out)
    text = out.getvalue()
    assert (
        "plans: select_random_points: mariadb-local vs mariadb-local+eq_range_index_dive_limit=1: 2 statement" in text
    )
    assert "829" in text and "20" in text and "41.5x fewer" in text


def test_the_json_document_carries_the_plans() -> None:
    doc = Outcome((), plans=(example_check(),)).document()
    plans = doc["plans"]
    assert isinstance(plans, list)
    first = plans[0]["statements"][0]
    assert first["changes"] == ["sbtest1: rows 829 → 20 (41.5x fewer)"] or first["changes"] == (
        "sbtest1: rows 829 → 20 (41.5x fewer)",
    )
    assert first["base"]["tables"][0]["rows"] == 829.0
    assert "plans" not in Outcome(()).document()


def test_markdown_shows_derived_tables_rather_than_taking_them_for_html() -> None:
    base = QueryPlan(
        (TableAccess("a", "range", "PRIMARY", 99.0), TableAccess("<subquery2>", "eq_ref", "distinct_key", 1.0))
    )
    head = QueryPlan((TableAccess("a", "range", "PRIMARY", 99.0),))
    check = PlanCheck("s", "b", "h", (compare_statement("SELECT ?", "SELECT 1", base, head),))
    text = "\n".join(plans_markdown([check]))
    assert "| &lt;subquery2&gt; | eq_ref | distinct_key | 1 | - |   |   |" in text
    assert "<subquery2>" not in text


def test_the_trusted_comment_rebuilds_the_plans_from_data_only() -> None:
    from harness.report.trusted_comment import build_comment

    comment = build_comment(verdicts_json([ci_check()]))
    assert "🔀 select_random_points: mariadb-local@base vs mariadb-local" in comment
    assert "`SELECT id, k, c, pad FROM sbtest# WHERE k IN (?+)`" in comment
    assert "sbtest1: rows 829 → 20 (41.5x fewer)" in comment  # worked out again from the two plans
    assert "| sbtest1 | range | k_1 | 829 | range | k_1 | 20 |" in comment


def test_the_trusted_comment_drops_what_is_not_a_name_and_refuses_what_is_not_data() -> None:
    from harness.errors import ReportError
    from harness.report.trusted_comment import build_comment

    doc = json.loads(verdicts_json([ci_check()]))
    statement = doc["plans"][0]["statements"][0]
    statement["template"] = "SELECT `x` FROM t WHERE a = ? [click](https://evil.example)"
    statement["changes"] = ["@someone look at https://evil.example"]
    statement["head"]["tables"][0]["table"] = "<img src=x onerror=alert(1)>"
    statement["head"]["tables"][0]["key"] = "k_1"
    comment = build_comment(json.dumps(doc))
    assert "evil" not in comment and "@someone" not in comment and "img" not in comment
    assert "(statement not shown: see the full report)" in comment
    assert (
        "| sbtest1 | range | k_1 | 829 | - |   |   |" in comment and "| ? | - |   |   | range | k_1 | 20 |" in comment
    )
    statement["head"]["tables"][0]["rows"] = "many"
    with pytest.raises(ReportError, match=r"plans\[0\].statements\[0\].head.tables\[0\].rows"):
        build_comment(json.dumps(doc))
    doc["plans"] = {"not": "a list"}
    with pytest.raises(ReportError, match="plans"):
        build_comment(json.dumps(doc))


def test_an_external_server_is_skipped_with_a_note_and_nothing_started() -> None:
    from support.factories import scenario

    from harness.measure.plan_capture import check_plans
    from harness.model import Server

    local = Server("mariadb-local", "mariadb", "10.11", "local")
    staging = Server("staging", "mysql", "8.4", "external", port=3306, user="bench")
    session: Any = object()  # never touched: nothing may start or connect
    check = check_plans(session, local, scenario(), staging, scenario())
    assert check.statements == () and check.changed == ()
    assert check.note == "plans not compared: an external server's general log is not dbperf's to switch on"
    assert "plans not compared" in plans_markdown([check])[2]
