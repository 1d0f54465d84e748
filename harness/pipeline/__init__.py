"""The one wiring point from settings to runs, verdicts and an exit code (see :mod:`harness.pipeline.flow`)."""

from harness.measure.session import Reporter
from harness.pipeline.ab import ComparisonSpec
from harness.pipeline.advice import Pricing
from harness.pipeline.cases import Case, resolve
from harness.pipeline.flow import (
    JudgeOptions,
    changes,
    compare,
    gate,
    history,
    measure_case,
    record,
    run,
)
from harness.pipeline.opening import open_session, shared_session

__all__ = [
    "Case",
    "ComparisonSpec",
    "JudgeOptions",
    "Pricing",
    "Reporter",
    "changes",
    "compare",
    "gate",
    "history",
    "measure_case",
    "open_session",
    "record",
    "resolve",
    "run",
    "shared_session",
]
