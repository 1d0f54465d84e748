"""``pytest scenarios/ --lf`` after a session with no failure selects no scenario (harness/plugin.py).

pytest's default ``--last-failed-no-failures all`` reran every test when none had failed: after a session
whose cases were all skipped for want of a baseline, ``--lf`` selected all 42 scenario tests and measured
them for an hour (issue 33, item 5). In-process pytest runs of the shipped ``scenarios/test_scenarios.py``,
the pipeline stubbed to return a crafted outcome, as tests/unit/test_plugin_outcomes.py does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.model import MetricVerdict, Outcome, Verdict
from harness.plugin import Runner

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
NO_BASELINE = Outcome(
    runs=(),
    verdicts=(
        Verdict(
            mode="baseline", scenario="oltp_point_select", threads=2, base="baseline", head="mariadb-local",
            metrics=(MetricVerdict("baseline", False, "no_baseline", "no baseline; record one with: x", gating=False),),
        ),
    ),
)  # fmt: skip
REGRESSION = Outcome(
    runs=(),
    verdicts=(
        Verdict(
            mode="baseline", scenario="oltp_point_select", threads=2, base="baseline", head="mariadb-local",
            metrics=(MetricVerdict("qps", False, "regression", "Regression: QPS -30.0 %."),),
        ),
    ),
    exit_code=1,
)  # fmt: skip
ARGS = (
    "--dbperf-scenarios-dir", REPO / "scenarios", "--dbperf-servers-dir", REPO / "servers",
    "--dbperf-scenario", "oltp_point_*", "--dbperf-server", "mariadb-local", "--dbperf-no-cost",
    "--dbperf-profile", "quick",
)  # fmt: skip


def session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, outcome: Outcome, *args: str
) -> pytest.RunResult:
    monkeypatch.setattr(Runner, "run_case", lambda self, case: outcome)
    # the paths in ARGS make the checkout the inner session's rootdir: its own cache, not the checkout's
    cache = f"cache_dir={pytester.path / '.pytest_cache'}"
    return pytester.runpytest_inprocess(*ARGS, "-o", cache, *args)


@pytest.fixture
def scenarios(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_scenarios=(REPO / "scenarios" / "test_scenarios.py").read_text())
    return pytester


def test_lf_after_an_all_skipped_session_selects_no_scenario(scenarios: pytest.Pytester, monkeypatch):
    first = session(scenarios, monkeypatch, NO_BASELINE)
    first.assert_outcomes(skipped=1)
    again = session(scenarios, monkeypatch, NO_BASELINE, "--lf")
    again.assert_outcomes()  # nothing ran
    again.stdout.fnmatch_lines(["*no previously failed tests, deselecting all items*"])


def test_lf_still_reruns_the_failed_scenario(scenarios: pytest.Pytester, monkeypatch):
    session(scenarios, monkeypatch, REGRESSION).assert_outcomes(failed=1)
    session(scenarios, monkeypatch, NO_BASELINE, "--lf").assert_outcomes(skipped=1)


def test_a_user_who_chose_lfnf_all_gets_it(scenarios: pytest.Pytester, monkeypatch):
    session(scenarios, monkeypatch, NO_BASELINE).assert_outcomes(skipped=1)
    session(scenarios, monkeypatch, NO_BASELINE, "--lf", "--lfnf", "all").assert_outcomes(skipped=1)


def test_other_tests_keep_pytest_s_default(pytester: pytest.Pytester):
    pytester.makepyfile(test_plain="def test_one():\n    pass\n")
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
    pytester.runpytest_inprocess("--lf").assert_outcomes(passed=1)  # --lfnf all: every test again
