"""verdicts.json: the one typed, versioned verdict document of a run (docs/reports.md, "verdicts.json").

:class:`VerdictDocument` is the document and its schema: the frozen records of :mod:`harness.model`
(verdicts, the change under test, query plans) and the flame graphs' file names, with ``format``
(:data:`DOCUMENT_FORMAT`). :func:`dump_document` is the only writer and :func:`read_document` the only
reader: it checks the version, then validates the whole file once against the records' type hints
with pydantic in strict mode (no coercion, finite numbers only), and raises one
:class:`DocumentError` line naming the first field that is wrong. What a field may *say* (names,
paths, free text) is the trusted builders' business (:mod:`harness.report.trusted_comment`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from harness import bounded_json
from harness.errors import HarnessError
from harness.model.definition_change import DefinitionChange
from harness.model.outcome import DOCUMENT_FORMAT, Outcome
from harness.model.query_plan import PlanCheck
from harness.model.run import RunResult
from harness.model.validation import first_problem
from harness.model.verdict import Verdict


class DocumentError(HarnessError):
    """A verdicts.json this dbperf cannot read: not JSON, another format, or a field of the wrong shape."""


@dataclass(frozen=True)
class VerdictDocument:
    """verdicts.json: what every renderer of a run's verdicts reads."""

    verdicts: tuple[Verdict, ...]
    changes: tuple[DefinitionChange, ...] = ()  # the change under test (the trusted jobs name and annotate it)
    plans: tuple[PlanCheck, ...] = ()  # A/B: the plans of each comparison's statements
    flame_graphs: tuple[str, ...] = ()  # the differential flame graphs' file names in the run's folder
    format: int = DOCUMENT_FORMAT

    # read by pydantic for this record and every record in it: no coercion ("8" is not 8), no NaN
    __pydantic_config__: ClassVar[dict[str, bool]] = {"strict": True, "allow_inf_nan": False}


@dataclass(frozen=True)
class Check:
    """One check as its Markdown report, job summary and comment show it: the verdict document, the runs it
    was judged from (failures, versions, testbed), its title and the notes to print."""

    document: VerdictDocument
    runs: tuple[RunResult, ...] = ()
    title: str = "dbperf performance check"
    warnings: tuple[str, ...] = ()


def document_of(
    outcome: Outcome, changes: tuple[DefinitionChange, ...] = (), flame_graphs: tuple[str, ...] = ()
) -> VerdictDocument:
    """The verdict document of an invocation's outcome: what verdicts.json holds and every renderer reads."""
    return VerdictDocument(outcome.verdicts, changes, outcome.plans, flame_graphs)


def dump_document(document: VerdictDocument) -> str:
    """verdicts.json's text (each verdict also carries its ``outcome``, as ``--json`` prints it)."""
    doc: dict[str, object] = {
        "format": document.format,
        "verdicts": [{**dataclasses.asdict(v), "outcome": v.outcome} for v in document.verdicts],
        "changes": [dataclasses.asdict(c) for c in document.changes],
    }
    if document.plans:
        doc["plans"] = [dataclasses.asdict(p) for p in document.plans]
    if document.flame_graphs:
        doc["flame_graphs"] = list(document.flame_graphs)
    return json.dumps(doc, indent=2, default=str) + "\n"


def read_document(text: str, source: str = "verdicts.json") -> VerdictDocument:
    """verdicts.json read back and validated once against :class:`VerdictDocument` (see the module docstring)."""
    from pydantic import TypeAdapter, ValidationError

    try:
        raw: Any = bounded_json.loads(text)
    except bounded_json.JSONLimitError as exc:  # checked before parsing: depth, size, digits
        raise DocumentError(f"{source}: beyond what dbperf writes ({exc}); give the verdicts.json of a run") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DocumentError(f"{source}: not JSON ({exc}); give the verdicts.json of a dbperf run") from None
    found = raw.get("format") if isinstance(raw, dict) else None
    if not isinstance(found, int) or isinstance(found, bool) or found != DOCUMENT_FORMAT:
        newer = isinstance(found, int) and found > DOCUMENT_FORMAT
        fix = "upgrade dbperf to read it" if newer else "give the verdicts.json of a dbperf run"
        raise DocumentError(f"{source}: format {str(found)[:20]} is not this dbperf's ({DOCUMENT_FORMAT}); {fix}")
    try:
        return TypeAdapter(VerdictDocument).validate_json(text)
    except ValidationError as exc:
        raise DocumentError(
            f"{source}: {first_problem(exc, 'the document')}; give the verdicts.json of a dbperf run of this version"
        ) from None
