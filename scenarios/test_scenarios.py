"""Pinned scenarios as pytest tests: ``pytest scenarios/ -k point_select``.

One test per scenario x server x thread count (ids like ``oltp_point_select-mariadb-local-2t``).
Choose the server with ``--dbperf-server`` (e.g. ``mysql-9.7``), the profile with ``--dbperf-profile``.
A case that cannot be judged (a failed run, a store that cannot take the runs) errors, a regression
fails, and a case with no comparable baseline is skipped with the reason.
"""

from harness.model import Outcome
from harness.pipeline.cases import ScenarioCase
from harness.plugin import Runner


def test_scenario(dbperf_case: ScenarioCase, dbperf_outcome: Outcome, dbperf_runner: Runner) -> None:
    dbperf_runner.check(dbperf_case, dbperf_outcome)
