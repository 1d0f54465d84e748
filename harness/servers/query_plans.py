"""The statements a workload issues, read from a server's general log, and their plans (EXPLAIN FORMAT=JSON).

Three steps, each usable alone:

* :func:`log_statements` / :func:`logged_statements`: switch the general log on (to the
  ``mysql.general_log`` table) and read back what clients ran, prepared statements' executions with
  their values in place (both MariaDB and MySQL log an ``Execute`` that way);
* :func:`template` and :func:`examples`: one concrete example per statement template, literals and
  the numbers of numbered tables (``sbtest1``, ``sbtest2``) folded so a 10-table scenario gives one
  template per statement, not ten;
* :func:`explain` and :func:`parse_plan`: the plan of each example, read from the JSON of MariaDB
  10.11/11.x and MySQL 8/9 (their documents differ: ``rows`` vs ``rows_examined_per_scan``,
  ``filesort``/``temporary_table`` blocks vs ``using_filesort``/``using_temporary_table`` flags).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final

import pymysql

from harness.errors import ServerError
from harness.model.endpoint import Endpoint
from harness.model.query_plan import QueryPlan, TableAccess
from harness.servers.provider import connect

#: Statements EXPLAIN takes on both families (it never runs them, DML included).
EXPLAINABLE: Final = frozenset({"SELECT", "WITH", "UPDATE", "DELETE", "INSERT", "REPLACE"})
#: General log commands that carry a statement a client ran.
_RAN: Final = ("Query", "Execute")

_STRING = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.|\"\")*\"")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\b")
_LIST = re.compile(r"\(\s*\?(?:\s*,\s*\?)*\s*\)")
_LISTS = re.compile(r"\(\?\+\)(?:\s*,\s*\(\?\+\))+")
_NUMBERED = re.compile(r"\b([A-Za-z_](?:[A-Za-z0-9_]*[A-Za-z_])?)\d+\b")
_SPACE = re.compile(r"\s+")


def template(statement: str) -> str:
    """The statement with every literal replaced by ``?``, lists of them by ``(?+)``, the numbers of
    numbered names by ``#`` (``sbtest7`` -> ``sbtest#``) and white space collapsed."""
    text = _STRING.sub("?", statement.strip().rstrip(";"))
    text = _NUMBER.sub("?", text)
    text = _LIST.sub("(?+)", text)
    text = _LISTS.sub("(?+)...", text)
    text = _NUMBERED.sub(r"\1#", text)
    return _SPACE.sub(" ", text).strip()


def explainable(statement: str) -> bool:
    """Whether EXPLAIN takes the statement (reads and DML; not BEGIN, COMMIT, SET, SHOW, CALL...)."""
    words = statement.lstrip(" \t\r\n(").split(None, 1)
    return bool(words) and words[0].upper() in EXPLAINABLE


def examples(statements: Iterable[str]) -> dict[str, str]:
    """The first example of every explainable template, in the order they were first issued."""
    found: dict[str, str] = {}
    for statement in statements:
        if explainable(statement):
            found.setdefault(template(statement), statement.strip().rstrip(";"))
    return found


def log_statements(endpoint: Endpoint) -> None:
    """Start logging every statement to ``mysql.general_log`` (emptied first).

    For a server dbperf started for this alone: the general log is global, and costs every statement."""
    _run(
        endpoint,
        [
            "SET GLOBAL general_log = OFF",
            "SET GLOBAL log_output = 'TABLE'",
            "TRUNCATE TABLE mysql.general_log",
            "SET GLOBAL general_log = ON",
        ],
    )


def logged_statements(endpoint: Endpoint) -> list[str]:
    """Stop the general log and return the statements clients ran since :func:`log_statements`, in order
    (this connection's own left out)."""
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password)
        try:
            with conn.cursor() as cur:
                cur.execute("SET GLOBAL general_log = OFF")
                cur.execute(
                    "SELECT argument FROM mysql.general_log WHERE command_type IN (%s, %s) "
                    "AND thread_id <> CONNECTION_ID() ORDER BY event_time",
                    _RAN,
                )
                rows = cur.fetchall()
                cur.execute("TRUNCATE TABLE mysql.general_log")
        finally:
            conn.close()
    except pymysql.err.MySQLError as exc:
        raise ServerError(
            f"cannot read the general log of {endpoint.host}:{endpoint.port} ({exc}): the benchmark account "
            "needs the privilege to set global variables and read mysql.general_log"
        ) from exc
    return [_text(row[0]) for row in rows if row and row[0] is not None]


def explain(endpoint: Endpoint, statements: Sequence[str]) -> list[QueryPlan | str]:
    """The plan of each statement, or the server's one-line refusal (EXPLAIN never runs the statement)."""
    out: list[QueryPlan | str] = []
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password, endpoint.database)
    except pymysql.err.MySQLError as exc:
        raise ServerError(f"cannot connect to {endpoint.host}:{endpoint.port} to EXPLAIN: {exc}") from exc
    try:
        with conn.cursor() as cur:
            # MySQL 9.x prints the iterator format (2) by default, which plans no UPDATE or DELETE; MariaDB
            # and older MySQL have only format 1, and refuse the variable
            with contextlib.suppress(pymysql.err.MySQLError):
                cur.execute("SET SESSION explain_json_format_version = 1")
            for statement in statements:
                try:
                    cur.execute("EXPLAIN FORMAT=JSON " + statement)
                    row = cur.fetchone()
                except pymysql.err.MySQLError as exc:
                    out.append(" ".join(str(exc).split()))
                    continue
                out.append(parse_plan(_text(row[0]) if row else "{}"))
    finally:
        conn.close()
    return out


def parse_plan(document: str) -> QueryPlan:
    """A plan from the JSON of ``EXPLAIN FORMAT=JSON`` (MariaDB, or MySQL's format 1 or 2).

    Tables are listed in document order, which is the order the server joins them (a materialised
    subquery's tables follow the table that reads its result). Raises ServerError on a document that is
    not JSON.
    """
    try:
        tree = json.loads(document)
    except json.JSONDecodeError as exc:
        raise ServerError(f"EXPLAIN FORMAT=JSON returned something that is not JSON ({exc.msg})") from None
    tables: list[TableAccess] = []
    filesort = temporary = False
    for key, node in _walk(tree):
        if key in {"filesort", "read_sorted_file"} or node.get("using_filesort") is True:
            filesort = True
        if key == "temporary_table" or node.get("using_temporary_table") is True:
            temporary = True
        operation = str(node.get("operation", ""))
        if "inputs" in node and operation.startswith("Sort"):  # MySQL format 2
            filesort = True
        if node.get("temp_table") is True or operation.startswith("Aggregate using temporary"):
            temporary = True
        if "table_name" in node:
            tables.append(_access(node))
    return QueryPlan(tuple(tables), filesort=filesort, temporary=temporary)


def _access(node: Mapping[str, object]) -> TableAccess:
    inserting = node.get("insert") is True or node.get("insert") == 1
    # MySQL's format 2 says "index" for every index access and names the kind apart
    access = "" if inserting else str(node.get("index_access_type", node.get("access_type", "")))
    key = node.get("key", node.get("index_name", ""))
    rows = node.get("rows", node.get("rows_examined_per_scan", node.get("estimated_rows")))
    return TableAccess(
        table=str(node.get("alias", node["table_name"])),
        access_type=access,
        key="" if key is None else str(key),
        rows=float(rows) if isinstance(rows, int | float) and not isinstance(rows, bool) else None,
    )


def _walk(tree: object, key: str = "") -> Iterator[tuple[str, Mapping[str, object]]]:
    """Every object of the document with the key it sits under, in document order (pre-order)."""
    if isinstance(tree, dict):
        yield key, tree
        for name, value in tree.items():
            yield from _walk(value, str(name))
    elif isinstance(tree, list):
        for value in tree:
            yield from _walk(value, key)


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes | bytearray) else str(value)


def _run(endpoint: Endpoint, statements: Sequence[str]) -> None:
    statement = ""
    try:
        conn = connect(endpoint.host, endpoint.port, endpoint.user, endpoint.password)
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
        finally:
            conn.close()
    except pymysql.err.MySQLError as exc:
        raise ServerError(
            f"{endpoint.host}:{endpoint.port} refused '{statement}' ({exc}): the benchmark account needs the "
            "privilege to set global variables to capture a workload's statements"
        ) from exc
