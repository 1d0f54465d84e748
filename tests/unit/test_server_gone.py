"""After a failed run, whether its server died is decided on states: the process ended, or the server stops
answering and its process then ends (a killed server's sockets close before its process is reaped)."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field

import pymysql
import pytest

from harness.model.endpoint import Endpoint
from harness.servers import provider


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # nothing listens once it is closed


@dataclass
class Dying:
    """A server whose process outlives its sockets for ``lingering`` looks at its state."""

    lingering: int
    endpoint: Endpoint = field(default_factory=lambda: Endpoint("127.0.0.1", _closed_port(), "u", "p", "sbtest"))
    looks: int = 0

    def alive(self) -> bool:
        self.looks += 1
        return self.looks <= self.lingering


def test_a_server_whose_process_ends_after_its_sockets_is_gone() -> None:
    dying = Dying(lingering=3)
    assert provider.gone(dying)  # type: ignore[arg-type]
    assert dying.looks == 4


def test_a_server_that_answers_is_not_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    class Answer:
        def close(self) -> None:
            pass

    monkeypatch.setattr(provider, "connect", lambda *args, **kwargs: Answer())
    alive = Dying(lingering=10**6)
    assert not provider.gone(alive)  # type: ignore[arg-type]
    assert alive.looks == 1


def test_a_process_that_neither_answers_nor_ends_is_taken_for_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise pymysql.err.OperationalError(2003, "refused")

    monkeypatch.setattr(provider, "connect", refuse)
    stuck = Dying(lingering=10**6)
    assert not provider.gone(stuck, within_s=0.5)  # type: ignore[arg-type]
    assert stuck.looks >= 2
