"""Pinned scenarios as pytest tests: ``pytest scenarios/ -k point_select``.

One test per scenario x server x thread count (ids like ``oltp_point_select-mariadb-local-2t``).
Choose the server with ``--dbperf-server`` (e.g. ``mysql-9.7``), the profile with ``--dbperf-profile``.
"""

from harness.plugin import Case, Runner


def test_scenario(dbperf_case: Case, dbperf_runner: Runner) -> None:
    results = dbperf_runner.run_case(dbperf_case)
    dbperf_runner.check(dbperf_case, results)
