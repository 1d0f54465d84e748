"""The pytest plugin decides each scenario test from the outcome's exit code, as ``dbperf gate`` does.

In-process pytest runs (``pytester``, as pytest-benchmark tests its plugin) of the shipped
``scenarios/test_scenarios.py`` with the pipeline stubbed to return a crafted outcome: exit 2 (runs the
store could not take) is an error, a regression a failure, a case with nothing judged a skip, a pass a
pass; each reported in one line, without a traceback. Before this, the plugin read the verdicts itself
and passed a case whose runs the store had refused (``dbperf gate`` exited 2 on the same case).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import BaselineError
from harness.model import MetricVerdict, Outcome, Verdict
from harness.plugin import Runner

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]


def _verdict(*metrics: MetricVerdict) -> Verdict:
    return Verdict(
        mode="baseline", scenario="oltp_point_select", threads=2, base="baseline", head="mariadb-local",
        metrics=metrics,
    )  # fmt: skip


PASS = MetricVerdict("qps", False, "pass", "Pass: QPS +0.4 % (95 % interval -2.0 % to +2.9 %) rules out a drop of 5 %.")
REGRESSION = MetricVerdict("qps", False, "regression", "Regression: QPS -30.0 %, a drop beyond the minimum effect.")
NO_BASELINE = MetricVerdict(
    "baseline", False, "no_baseline", "no baseline for this testbed; record one with: dbperf baseline record",
    gating=False,
)  # fmt: skip
STORE_ERROR = "the store could not take 8 runs (disk full); they were kept in unsaved-runs/: dbperf store import"


# -vv: the short summary shows whole messages (at the default verbosity pytest trims them to the width)
ARGS = (
    "-p", "no:cacheprovider", "-rA", "-vv",
    "--dbperf-scenarios-dir", REPO / "scenarios", "--dbperf-servers-dir", REPO / "servers",
    "--dbperf-scenario", "oltp_point_select", "--dbperf-server", "mariadb-local", "--dbperf-no-cost",
    "--dbperf-profile", "quick",
)  # fmt: skip


def run_scenarios(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, outcome: Outcome) -> pytest.RunResult:
    monkeypatch.setattr(Runner, "run_case", lambda self, case: outcome)
    pytester.makepyfile(test_scenarios=(REPO / "scenarios" / "test_scenarios.py").read_text())
    return pytester.runpytest_inprocess(*ARGS)


def test_a_store_that_cannot_take_the_runs_is_an_error(pytester, monkeypatch):
    # the runs were measured and judged a pass, but the store refused them: dbperf gate exits 2
    result = run_scenarios(
        pytester, monkeypatch, Outcome(runs=(), verdicts=(_verdict(PASS),), exit_code=2, error=STORE_ERROR)
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*oltp_point_select-mariadb-local-2t: {STORE_ERROR}*"])
    assert "Traceback" not in result.stdout.str()


def failure_section(result: pytest.RunResult, banner: str) -> list[str]:
    """The lines between the ``FAILURES``/``ERRORS`` banner's test header and the short summary."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if banner in line and line.startswith("="))
    end = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return [line for line in lines[start + 2 : end] if line.strip()]


def test_a_regression_fails_in_one_line(pytester, monkeypatch):
    result = run_scenarios(pytester, monkeypatch, Outcome(runs=(), verdicts=(_verdict(REGRESSION),), exit_code=1))
    result.assert_outcomes(failed=1)
    expected = (
        "PerformanceRegression: oltp_point_select-mariadb-local-2t: QPS -30.0 %, a drop beyond the minimum effect "
        "(against the timing baseline)"
    )
    assert failure_section(result, "FAILURES") == [expected]
    # the short summary carries the same line (pytest keeps none for a pytrace=False failure by itself)
    result.stdout.fnmatch_lines([f"FAILED *test_scenario*oltp_point_select-mariadb-local-2t* - {expected}"])
    text = result.stdout.str()
    assert "Traceback" not in text and "harness/plugin.py" not in text


def test_a_harness_error_while_running_is_a_one_line_error(pytester, monkeypatch):
    # e.g. a malformed baseline file met after the runs: before, 35 lines of traceback through the plugin
    def broken(self, case):
        raise BaselineError("baselines/cost/x/1t.json: not valid JSON (line 2: Expecting property name); fix it")

    monkeypatch.setattr(Runner, "run_case", broken)
    pytester.makepyfile(test_scenarios=(REPO / "scenarios" / "test_scenarios.py").read_text())
    result = pytester.runpytest_inprocess(*ARGS)
    result.assert_outcomes(errors=1)
    assert failure_section(result, "ERRORS") == [
        "oltp_point_select-mariadb-local-2t: baselines/cost/x/1t.json: not valid JSON (line 2: Expecting property "
        "name); fix it"
    ]
    assert "Traceback" not in result.stdout.str() and "json.decoder" not in result.stdout.str()


def test_nothing_judged_is_a_skip_with_the_reason(pytester, monkeypatch):
    result = run_scenarios(pytester, monkeypatch, Outcome(runs=(), verdicts=(_verdict(NO_BASELINE),), exit_code=0))
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*nothing judged: no baseline for this testbed; record one with*"])


def test_a_pass_passes(pytester, monkeypatch):
    result = run_scenarios(pytester, monkeypatch, Outcome(runs=(), verdicts=(_verdict(PASS),), exit_code=0))
    result.assert_outcomes(passed=1)


def test_errors_alone_exit_2_not_the_regression_code(pytester, monkeypatch):
    # a read-only store ended pytest with exit 1, the code of a regression (issue 35)
    result = run_scenarios(pytester, monkeypatch, Outcome(runs=(), verdicts=(), exit_code=2, error=STORE_ERROR))
    result.assert_outcomes(errors=1)
    assert result.ret == 2


def test_a_regression_still_exits_1(pytester, monkeypatch):
    result = run_scenarios(pytester, monkeypatch, Outcome(runs=(), verdicts=(_verdict(REGRESSION),), exit_code=1))
    assert result.ret == 1


def test_an_unexpected_exception_is_a_bug_in_one_line(pytester, monkeypatch, tmp_path):
    def broken(self, case):
        raise RuntimeError("boom")

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(Runner, "run_case", broken)
    pytester.makepyfile(test_scenarios=(REPO / "scenarios" / "test_scenarios.py").read_text())
    result = pytester.runpytest_inprocess(*ARGS)
    result.assert_outcomes(errors=1)
    (line,) = failure_section(result, "ERRORS")
    assert "internal error (RuntimeError: boom): a bug in dbperf; the traceback is in " in line
    (crash,) = tmp_path.glob("dbperf-crash-*.txt")
    assert "raise RuntimeError" in crash.read_text() and str(crash) in line
    assert "Traceback" not in result.stdout.str()
    assert result.ret == 2
