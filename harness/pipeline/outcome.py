"""Closing an invocation's :class:`~harness.model.outcome.Outcome`: forecasts, runs the store could not take."""

from __future__ import annotations

import dataclasses

from harness.config.settings import Settings
from harness.measure.session import Session
from harness.model.outcome import EXIT_ERROR, Outcome
from harness.pipeline.forecasts import stored_sweeps, with_forecasts


def closed(outcome: Outcome, session: Session, settings: Settings) -> Outcome:
    """Cost comparisons get their forecasts (:mod:`harness.pipeline.forecasts`); runs the store could not take
    make the invocation an error, with the line that says where they are."""
    outcome = with_forecasts(outcome, session.testbed, settings, stored_sweeps(settings, session.testbed))
    if not session.ledger.unsaved:
        return outcome
    return dataclasses.replace(outcome, exit_code=EXIT_ERROR, error=session.ledger.unsaved.message(settings.store))
