"""Fixtures shared by integration test modules."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.integration import throwaway_mariadb

from harness.model.endpoint import Endpoint


@pytest.fixture(scope="module")
def mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Endpoint]:
    """A bare MariaDB for one test module (``helpers.throwaway_mariadb``); a module may override it."""
    with throwaway_mariadb(tmp_path_factory.mktemp("throwaway-mariadb") / "d") as endpoint:
        yield endpoint
