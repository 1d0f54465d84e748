"""The defaults of `pytest scenarios/` can fail on a real regression, and say how before running.

The quick profile runs one repetition, whose smallest possible p-value against a baseline of 8 runs
(2/9 = 0.22) is above alpha: such a gate could never fail. With the defaults (no
``--dbperf-repetitions``) the design check raises the repetitions before the first run, prints one
line saying so and pointing at the settings that decide (``--repetitions``, cost runs), and the gate
then fails on a real slowdown: the server's CPU shared with two busy loops.
"""

from __future__ import annotations

import re

import pytest

from .test_gate_can_fail import POINT, busy_loops

pytestmark = pytest.mark.integration


def test_default_pytest_run_raises_repetitions_says_so_and_fails_on_a_regression(
    dbperf, inner_pytest, tmp_path, store_path
) -> None:
    baselines = tmp_path / "baselines"
    recorded = dbperf.run(
        "baseline", "record", *POINT, "--no-cost", "--repetitions", "8", "--baselines-dir", baselines,
        "--store", store_path, timeout_s=900,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    with busy_loops():
        result = inner_pytest(
            "scenarios/", "-k", "oltp_point_select", "--dbperf-no-cost",
            "--dbperf-baselines-dir", baselines, "--dbperf-store", store_path,
        )  # fmt: skip
    out = result.stdout
    note = re.search(r"dbperf: note: .*running (\d+) repetitions instead of 1 .*--repetitions.*--cost", out)
    assert note, out[-4000:]
    assert int(note.group(1)) >= 3
    assert result.returncode == 1, out[-4000:]
    assert "PerformanceRegression" in out
