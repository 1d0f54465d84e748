"""Cost runs tell valgrind and its tools one vgdb prefix in the run's folder (issue 35: FIFOs left in TMPDIR)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.servers import callgrind
from harness.servers.callgrind import Callgrind, Control


def test_the_fifos_go_in_the_folder_given_and_only_then() -> None:
    assert "--vgdb-prefix=/run/x/callgrind/vgdb-pipe" in Callgrind().argv(
        "/run/x/callgrind", vgdb_dir="/run/x/callgrind"
    )
    assert not any(a.startswith("--vgdb-prefix") for a in Callgrind().argv("/counts"))  # a container's /tmp


def test_every_control_command_uses_the_same_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def fake_run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        if argv[-1] == "-l":
            return subprocess.CompletedProcess(argv, 0, "use --pid=42 for /usr/bin/valgrind.bin sleep\n", "")
        if "-d" in argv:
            (tmp_path / "cg.out.42.1").write_text("")
        return subprocess.CompletedProcess(argv, 0, "OK\n", "")

    monkeypatch.setattr(callgrind.subprocess, "run", fake_run)
    control = Control(tmp_path, None, vgdb_dir=str(tmp_path))
    control.zero()
    control.dump("w")
    prefix = f"--vgdb-prefix={tmp_path}/vgdb-pipe"
    assert [c[0] for c in calls] == ["vgdb", "callgrind_control", "callgrind_control", "callgrind_control"]
    assert all(c[1] == prefix for c in calls)
