"""Fixtures of the unit tests (their helpers and record factories: tests/support)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.ci_repos import planner_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git project for the CI planner's tests (``support.ci_repos.planner_repo``)."""
    return planner_repo(tmp_path)
