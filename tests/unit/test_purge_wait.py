"""Waiting for purge between the warm-up and the measured window: the history list length read from
``SHOW ENGINE INNODB STATUS``, polled until it is 0, with a clear error when it never gets there.
(The real servers are exercised by every write-workload cost run: tests/integration/test_work_vector.py.)"""

from __future__ import annotations

import pytest

from harness.errors import ServerError
from harness.measure import cost
from harness.model.endpoint import Endpoint

ENDPOINT = Endpoint("127.0.0.1", 3306, "u", "p", "sbtest")
#: The part of MariaDB 10.11's and MySQL 9.7's status that matters (both print it in TRANSACTIONS).
STATUS = """------------
TRANSACTIONS
------------
Trx id counter 4242
Purge done for trx's n:o < 4200 undo n:o < 0 state: running
History list length {n}
LIST OF TRANSACTIONS FOR EACH SESSION:
"""


class _Cursor:
    def __init__(self, lengths: list[int]) -> None:
        self.lengths = lengths

    def __enter__(self) -> _Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, sql: str) -> None:
        assert sql == "SHOW ENGINE INNODB STATUS"

    def fetchone(self) -> tuple[str, str, str]:
        n = self.lengths.pop(0) if len(self.lengths) > 1 else self.lengths[0]
        return ("InnoDB", "", STATUS.format(n=n))


class _Conn:
    def __init__(self, lengths: list[int]) -> None:
        self.lengths = lengths
        self.closed = False

    def cursor(self) -> _Cursor:
        return _Cursor(self.lengths)

    def close(self) -> None:
        self.closed = True


def test_polls_until_the_history_is_empty(monkeypatch):
    conn = _Conn([120, 40, 0])
    monkeypatch.setattr(cost, "connect", lambda *a, **k: conn)
    assert cost.wait_for_purge(ENDPOINT, timeout_s=30, poll_s=0) >= 0
    assert conn.lengths == [0] and conn.closed


def test_a_history_that_never_empties_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(cost, "connect", lambda *a, **k: _Conn([7]))
    with pytest.raises(ServerError, match=r"purge did not empty the history list within 0 s .*\(7 undo logs left\)"):
        cost.wait_for_purge(ENDPOINT, timeout_s=0, poll_s=0)


def test_a_status_without_the_line_is_an_error():
    class Plain(_Conn):
        def cursor(self) -> _Cursor:
            c = _Cursor([0])
            c.fetchone = lambda: ("MyISAM", "", "nothing here")  # type: ignore[method-assign]
            return c

    with pytest.raises(ServerError, match="no 'History list length'"):
        cost.history_length(Plain([0]))  # type: ignore[arg-type]
