"""The change under test: one effective difference between the base and head definitions a comparison runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ChangeStatus = Literal["changed", "added", "removed"]


#: The name of a change that is a whole file (a scenario's Lua script changed), not one setting in it.
CONTENTS = "contents"


@dataclass(frozen=True)
class DefinitionChange:
    """One setting, variable or field that differs between base and head, and where it is in the head's file.

    ``file`` is repository-relative (``servers/conf/mariadb.cnf``, ``servers/mariadb-local.toml``,
    ``scenarios/oltp_insert.toml``); ``name`` the option (``innodb_flush_log_at_trx_commit``, ``version``)
    and ``section`` its option-file section (``mysqld``; ``""`` in a TOML file); ``line`` its line in the
    head's file (``None`` when removed or not found), where a pull request's annotation goes. ``base``,
    ``head`` and ``scenario`` name the comparison it belongs to (server labels, and the scenario for a
    scenario change; ``""``: every scenario of that server pair).
    """

    file: str
    name: str
    old: str = ""
    new: str = ""
    status: ChangeStatus = "changed"
    line: int | None = None
    section: str = ""
    base: str = ""
    head: str = ""
    scenario: str = ""

    def concerns(self, base: str, head: str, scenario: str) -> bool:
        """Whether this change is (part of) what a comparison of ``base`` → ``head`` on ``scenario`` tests."""
        return (not self.head or (self.base, self.head) == (base, head)) and self.scenario in ("", scenario)
