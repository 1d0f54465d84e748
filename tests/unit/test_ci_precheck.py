"""The design check ``ci run`` runs before measuring judges what it will run: ``--threads`` and ``--alpha``.

Issue 35: the pre-check assessed the scenario files' thread counts at the default alpha whatever the
command line said. Real temporary git repositories (the fixtures of test_ciplan.py) and the real plan.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.ci_repos import LOCAL_A, commit

from harness.cli.ci_cmds import build_plan
from harness.config.settings import resolve_settings

POOL = {"servers/local-a.toml": LOCAL_A + '\n[variables]\nthread_handling = "pool-of-threads"\n'}


def design(root: Path, **flags: str) -> tuple[list[str], int, dict[tuple[str, str], float]]:
    """The labels of the assessed tests, the pairs, and each timing test's power at its minimum effect."""
    settings = resolve_settings({"scenario": "point", **flags}, root=root, environ={})
    _, found = build_plan("main", "change", settings)
    power = {(t.label, t.metric): t.power for t in found.tests if t.label.endswith(" time")}
    return [t.label for t in found.tests], found.pairs, power


def test_the_pre_check_assesses_the_threads_of_the_command_line(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    commit(repo, "thread pool", POOL)
    default, _, _ = design(repo, repetitions="100")
    assert default and all(" 4t " not in label and " 7t " not in label for label in default)
    labels, _, _ = design(repo, repetitions="100", threads="4,7")
    assert {label.split()[2] for label in labels} == {"4t", "7t"}


def test_the_pre_check_judges_power_at_the_alpha_of_the_command_line(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(repo)
    commit(repo, "thread pool", POOL)
    _, _, default = design(repo, repetitions="100")
    _, _, loose = design(repo, repetitions="100", alpha="0.3")
    assert default and default.keys() == loose.keys()
    assert all(loose[test] > default[test] for test in default), (default, loose)  # more power at a looser alpha
