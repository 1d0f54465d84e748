"""The one wiring point from settings to runs, verdicts and an exit code (see :mod:`harness.pipeline.flow`)."""

from harness.pipeline.ab import ComparisonSpec
from harness.pipeline.flow import (
    EXIT_ERROR,
    EXIT_OK,
    EXIT_REGRESSION,
    Case,
    JudgeOptions,
    Outcome,
    compare,
    exit_code,
    gate,
    history,
    measure_case,
    open_session,
    record,
    resolve,
    run,
)

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
