"""Records passed between pipeline stages.

Every record is a frozen dataclass, validated when it is created (as pyperf does with its runs), so a
stage can trust what it is handed. Stages never mutate a record; they build a new one with
:func:`dataclasses.replace`.

The pipeline, and the record each stage hands on::

    config ─► testbed ─► provision ─► dataset ─► run ─► store ─► judge ─► report
    Server    Testbed    (running     (snapshot)  RunResult       Verdict
    Scenario              server)
"""

from harness.model.definition_change import ChangeStatus, DefinitionChange
from harness.model.endpoint import Endpoint
from harness.model.ids import stable_hash
from harness.model.latency import LatencyBucket, histogram_percentile
from harness.model.metrics import METRICS, Metric, RunKind
from harness.model.operation_stats import OperationStats
from harness.model.outcome import EXIT_ERROR, EXIT_OK, EXIT_REGRESSION, Outcome, exit_code
from harness.model.run import (
    CostProfile,
    FunctionCost,
    IntervalSample,
    Metrics,
    Probes,
    RunResult,
    RunStatus,
    Testbed,
    Totals,
)
from harness.model.scenario import POST_RUN_CHECKS, ROLLBACK_SCRIPTS, WARMUP_MODES, CostSettings, Scenario
from harness.model.server import Flavour, ProviderKind, Server
from harness.model.verdict import (
    FunctionDelta,
    Kind,
    MetricVerdict,
    ReadBack,
    SweepCurve,
    SweepPoint,
    Verdict,
    VerdictOutcome,
)

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_REGRESSION",
    "METRICS",
    "POST_RUN_CHECKS",
    "ROLLBACK_SCRIPTS",
    "WARMUP_MODES",
    "ChangeStatus",
    "CostProfile",
    "CostSettings",
    "DefinitionChange",
    "Endpoint",
    "Flavour",
    "FunctionCost",
    "FunctionDelta",
    "IntervalSample",
    "Kind",
    "LatencyBucket",
    "Metric",
    "MetricVerdict",
    "Metrics",
    "OperationStats",
    "Outcome",
    "Probes",
    "ProviderKind",
    "ReadBack",
    "RunKind",
    "RunResult",
    "RunStatus",
    "Scenario",
    "Server",
    "SweepCurve",
    "SweepPoint",
    "Testbed",
    "Totals",
    "Verdict",
    "VerdictOutcome",
    "exit_code",
    "histogram_percentile",
    "stable_hash",
]
