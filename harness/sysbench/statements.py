"""What a bundled sysbench workload asks of the server: its prepared statements per thread.

Each sysbench thread prepares its statements in ``thread_init`` and keeps them for the whole run, so
``max_prepared_stmt_count`` must cover every thread's (error 1461 otherwise); the server variables
stage derives the setting from :func:`required_prepared_statements`.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Final

from harness.errors import SysbenchError

# Per-thread prepared statements of the bundled scripts, from their prepare_statements() in 1.0.20:
# (statements per table, fixed statements). BEGIN and COMMIT are the two fixed ones of the
# transactional scripts; the select_random_* scripts prepare one statement of their own.
_PS_PER_THREAD: Final[dict[str, tuple[int, int]]] = {
    "oltp_read_write": (9, 2),  # point, 4 ranges, index upd., non-index upd., delete, insert
    "oltp_read_only": (5, 2),  # point, simple/sum/order/distinct ranges
    "oltp_write_only": (4, 2),  # index upd., non-index upd., delete, insert
    "oltp_point_select": (1, 0),
    "oltp_update_index": (1, 0),
    "oltp_update_non_index": (1, 0),
    "oltp_delete": (1, 0),
    "oltp_insert": (0, 0),  # plain queries, no prepared statements
    "bulk_insert": (0, 0),
    "select_random_points": (0, 1),
    "select_random_ranges": (0, 1),
}
_RANGE_STATEMENTS: Final = 4
_TRX_STATEMENTS: Final = 2


def required_prepared_statements(
    script: str,
    tables: int,
    threads: int,
    *,
    skip_trx: bool = False,
    range_selects: bool = True,
) -> int:
    """Server-side prepared statements a run of a bundled script holds open at once.

    Each sysbench thread prepares its statements in ``thread_init`` and keeps them for the whole run:
    about 9 x tables + 2 for oltp_read_write, 5 x tables + 2 for oltp_read_only, 4 x tables + 2 for
    oltp_write_only, and one per table for oltp_point_select. The server's
    ``max_prepared_stmt_count`` (default 16382) must be at least ``threads`` times that, or the run
    fails with error 1461. ``skip_trx`` and ``range_selects`` mirror the oltp options of the same
    name. ``script`` may be a name (``oltp_read_write``) or a path to the ``.lua`` file.

    A script that is not one of sysbench's (a scenario's own Lua file) is assumed to be built on
    ``oltp_common``, whose statements are at most those of oltp_read_write (all nine per-table
    statements plus BEGIN and COMMIT), so that upper bound is returned.
    """
    if tables < 0 or threads < 0:
        raise SysbenchError(f"tables ({tables}) and threads ({threads}) must not be negative")
    name = PurePath(script).name.removesuffix(".lua")
    per_table, fixed = _PS_PER_THREAD.get(name, _PS_PER_THREAD["oltp_read_write"])
    if name in {"oltp_read_write", "oltp_read_only"} and not range_selects:
        per_table -= _RANGE_STATEMENTS
    if fixed == _TRX_STATEMENTS and skip_trx:
        fixed = 0
    return (per_table * tables + fixed) * threads
