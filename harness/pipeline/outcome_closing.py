"""Closing an invocation's :class:`~harness.model.outcome.Outcome`: settings read back, forecasts, runs the
store could not take."""

from __future__ import annotations

import dataclasses

from harness.config.settings import Settings
from harness.measure.session import Session
from harness.model import ReadBack, Verdict
from harness.model.outcome import EXIT_ERROR, Outcome
from harness.pipeline.forecasts import stored_sweeps, with_forecasts


def with_read_back(verdict: Verdict, read_back: dict[str, dict[str, tuple[str, str]]]) -> Verdict:
    """The verdict with the settings each side's server did not take as asked (its label then says
    ``requested→effective``: :meth:`~harness.model.Verdict.side_label`)."""
    sides = (
        (("head", verdict.head),) if verdict.mode == "baseline" else (("base", verdict.base), ("head", verdict.head))
    )
    found = tuple(
        ReadBack(side, name, asked, runs)  # type: ignore[arg-type]
        for side, server in sides
        for name, (asked, runs) in sorted(read_back.get(server, {}).items())
    )
    return dataclasses.replace(verdict, read_back=found) if found else verdict


def closed(outcome: Outcome, session: Session, settings: Settings) -> Outcome:
    """Verdicts name the settings their servers did not take as asked; cost comparisons get their forecasts
    (:mod:`harness.pipeline.forecasts`); runs the store could not take make the invocation an error, with the
    line that says where they are."""
    if session.ledger.read_back:
        verdicts = tuple(with_read_back(v, session.ledger.read_back) for v in outcome.verdicts)
        outcome = dataclasses.replace(outcome, verdicts=verdicts)
    outcome = with_forecasts(outcome, session.testbed, settings, stored_sweeps(settings, session.testbed))
    if not session.ledger.unsaved:
        return outcome
    return dataclasses.replace(outcome, exit_code=EXIT_ERROR, error=session.ledger.unsaved.message(settings.store))
