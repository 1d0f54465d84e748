"""The one wiring point from settings to runs, verdicts and an exit code (see :mod:`harness.pipeline.flow`)."""

from harness.pipeline.ab import ComparisonSpec
from harness.pipeline.cases import Case, resolve
from harness.pipeline.flow import JudgeOptions, compare, gate, history, measure_case, open_session, record, run
from harness.pipeline.outcome import EXIT_ERROR, EXIT_OK, EXIT_REGRESSION, Outcome, exit_code

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_REGRESSION",
    "Case",
    "ComparisonSpec",
    "JudgeOptions",
    "Outcome",
    "compare",
    "exit_code",
    "gate",
    "history",
    "measure_case",
    "open_session",
    "record",
    "resolve",
    "run",
]
