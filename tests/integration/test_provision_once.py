"""Following the settings through a real ``compare`` on mariadb-local resolves each server's setup once
(harness/measure/provision.py, ``Provisioner.setup``): its effective variables, its builds and its dataset
snapshot key are read once per (server, scenario), and the plan capture, the estimate and every run read the
same record; each server start enters the dataset stage once, which never calls back up (docs/provisioning.md)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import harness
from harness import pipeline
from harness.measure import provision
from harness.measure.session import QuietReporter
from harness.servers.local import LocalProvider
from harness.servers.variables import effective_variables

pytestmark = pytest.mark.integration

ROOT = str(Path(harness.__file__).resolve().parent) + "/"
DATASET = ROOT + "dataset.py"
HIGHER = (ROOT + "measure/", ROOT + "pipeline/")


def _harness_caller(frame: FrameType) -> FrameType | None:
    caller = frame.f_back
    while caller is not None and not caller.f_code.co_filename.startswith(ROOT):
        caller = caller.f_back
    return caller


COUNTED = {
    effective_variables.__code__: "effective_variables",
    provision.resolve_setup.__code__: "resolve_setup",
    LocalProvider.build_id.__code__: "build_id",
    LocalProvider.server_build.__code__: "server_build",
}


def test_a_compare_resolves_each_server_setup_once(settings_factory: Callable[..., Any], tmp_path: Path) -> None:
    settings = settings_factory(tmp_path / "store.duckdb", profile="quick", cost=False, time=1, warmup=0, threads="1")
    base = pipeline.resolve(settings, "oltp_point_select", "mariadb-local")
    head = base.server.with_variables({"sort_buffer_size": "4M"})
    calls: Counter[str] = Counter()
    upward: list[str] = []  # calls from the dataset stage into measure/ or pipeline/
    from_started: dict[int, set[str]] = {}  # per Provisioner.started frame: the dataset functions it called
    started = provision.Provisioner.started.__wrapped__.__code__  # type: ignore[attr-defined]

    def count(frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        if frame.f_code in COUNTED:
            calls[COUNTED[frame.f_code]] += 1
        path = frame.f_code.co_filename
        if path.startswith(HIGHER) or path == DATASET:
            caller = _harness_caller(frame)
            if caller is not None and caller.f_code.co_filename == DATASET and path != DATASET:
                say = caller.f_locals.get("say")  # progress lines, the one callable the dataset stage takes
                if frame.f_code is not getattr(getattr(say, "__func__", say), "__code__", None):
                    upward.append(f"{caller.f_code.co_qualname} > {frame.f_code.co_qualname}")
            if caller is not None and caller.f_code is started and path == DATASET:
                from_started.setdefault(id(caller), set()).add(frame.f_code.co_qualname)

    spec = pipeline.ComparisonSpec(base.server, head, base.scenario)
    options = pipeline.JudgeOptions(alpha=0.5)  # few pairs: the runs are not what is tested
    sys.setprofile(count)
    try:
        outcome = pipeline.compare(settings, [spec], QuietReporter(), options)
    finally:
        sys.setprofile(None)
    assert outcome.runs and all(r.ok for r in outcome.runs), [r.failure for r in outcome.runs]
    assert len(outcome.runs) >= 4 and outcome.plans and outcome.plans[0].note == "", outcome.plans
    # two setups (base and head), each resolved once, though the estimate, the plan capture and every run use them
    assert calls == {"resolve_setup": 2, "effective_variables": 2, "build_id": 2, "server_build": 2}, calls
    # each server start asks the dataset stage once (the snapshot, built if missing, and its copy), and the
    # dataset stage builds a snapshot on its own: it never calls back into measure/ or pipeline/ (but to say
    # its progress lines)
    assert from_started and all(names == {"DatasetCache.restored"} for names in from_started.values()), from_started
    assert not upward, upward
