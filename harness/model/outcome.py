"""What one invocation produced (:class:`Outcome`) and how verdicts and runs become its exit code."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import bounded_json
from harness.errors import ConfigError
from harness.model.query_plan import PlanCheck
from harness.model.run import RunResult
from harness.model.verdict import Verdict

DOCUMENT_FORMAT = 1
"""The version of the ``--json`` document and ``verdicts.json`` (``"format"``); raised when a field changes
meaning or goes away, not when one is added."""

EXIT_OK = 0


EXIT_REGRESSION = 1


EXIT_ERROR = 2


@dataclass(frozen=True)
class Outcome:
    """What one invocation produced."""

    runs: tuple[RunResult, ...]
    verdicts: tuple[Verdict, ...] = ()
    exit_code: int = EXIT_OK
    warnings: tuple[str, ...] = ()
    group_id: str = ""
    pairs: int = 0
    looks: int = 0
    seed: int | None = None
    written: tuple[Path, ...] = field(default=())
    error: str = ""  # a closing error line the command prints last (e.g. runs the store could not take)
    plans: tuple[PlanCheck, ...] = ()  # A/B: the plans of each comparison's statements (never a verdict)

    def document(self) -> dict[str, object]:
        """The JSON document of ``--json`` (verdicts with their outcome, exit code, what ran)."""
        verdicts = [{**dataclasses.asdict(v), "outcome": v.outcome} for v in self.verdicts]
        doc: dict[str, object] = {"format": DOCUMENT_FORMAT, "verdicts": verdicts, "exit_code": self.exit_code}
        doc["run_ids"] = [r.run_id for r in self.runs]
        doc["warnings"] = list(self.warnings)
        if self.error:
            doc["error"] = self.error
        if self.plans:
            doc["plans"] = [dataclasses.asdict(p) for p in self.plans]
        if self.pairs:
            doc.update(pairs=self.pairs, looks=self.looks, seed=self.seed, group_id=self.group_id)
        return doc


def exit_code(verdicts: Sequence[Verdict], runs: Sequence[RunResult] = (), *, strict: bool = False) -> int:
    """0 pass (inconclusive too unless strict), 1 regression (or inconclusive with strict), 2 a failed run.

    A comparison that could not be judged because its runs failed is an error (2); a regression found
    elsewhere in the same invocation still says 1 unless such a comparison failed outright.
    """
    outcomes = {v.outcome for v in verdicts}
    if "failed" in outcomes:
        return EXIT_ERROR
    if "regression" in outcomes or (strict and "inconclusive" in outcomes):
        return EXIT_REGRESSION
    if any(not r.ok for r in runs):
        return EXIT_ERROR
    return EXIT_OK


def read_outcome_json(text: str, source: str = "<document>") -> dict[str, Any]:
    """A ``--json`` document read back; one line for anything this dbperf cannot read (``ci run``'s
    ``verdicts.json`` has its own typed reader: :func:`harness.model.verdict_document.read_document`)."""
    try:
        doc = bounded_json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: not a dbperf verdicts document ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict) or "verdicts" not in doc:
        raise ConfigError(f"{source}: not a dbperf verdicts document (no 'verdicts')")
    found = doc.get("format", 0)
    if not isinstance(found, int) or found > DOCUMENT_FORMAT:
        raise ConfigError(
            f"{source}: verdicts document format {found} is newer than this dbperf reads ({DOCUMENT_FORMAT}); "
            "upgrade dbperf to read it"
        )
    return doc
