"""valgrind's gdbserver FIFOs (``vgdb-pipe-*``) go in the run's own dump folder, not TMPDIR (issue 35).

A real valgrind (callgrind, as cost runs start it) runs ``sleep``; ``callgrind_control`` switches it on
and dumps through the FIFOs in the folder; SIGKILL (what a stopped run's grace period ends in) leaves
them there, to go with the folder, and none in TMPDIR.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from harness.servers.callgrind import Callgrind, Control

pytestmark = pytest.mark.integration


def test_a_killed_counted_process_leaves_no_vgdb_pipe_in_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    tmpdir, out_dir = tmp_path / "tmp", tmp_path / "callgrind"
    tmpdir.mkdir()
    out_dir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    argv = [*Callgrind().argv(str(out_dir), vgdb_dir=str(out_dir)), "sleep", "60"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(list(out_dir.glob("vgdb-pipe-*"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        control = Control(out_dir, None, vgdb_dir=str(out_dir))
        assert control.pid == process.pid  # vgdb -l found it through the folder's FIFOs
        control.zero()
        assert control.dump("window").name.startswith(f"cg.out.{process.pid}.")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert len(list(out_dir.glob("vgdb-pipe-*"))) == 3
    assert list(tmpdir.iterdir()) == []
