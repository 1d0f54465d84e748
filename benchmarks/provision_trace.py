"""How often provisioning goes back and forth between harness files, traced on a real ``dbperf compare``.

Runs ``dbperf compare --base mariadb-local --head-var sort_buffer_size=4M --scenario oltp_point_select``
(a timing compare, quick profile, 1 thread, 1 s runs, no warm-up) in this process, against a
fresh dataset cache and store in a temporary folder (so the dataset is prepared, not found), under
``sys.setprofile``.

What is counted:

* the trace starts when ``harness.pipeline.flow.compare`` is called and stops at the first call of
  ``harness.measure.context.Served.read``: the point where the first measured run holds a started server
  with its dataset restored (the settings, through the pipeline, the session, the dataset cache, the
  snapshot's preparation on its own server, the restore and the run's server start);
* the provisioning window is the first call of ``Session.instance`` in ``harness/measure/session.py``
  (the first server asked for: the comparison's plan capture, before any run) up to its first yield,
  the started server with its dataset (prepared into the snapshot, restored); both windows are printed;
* every Python ``call`` event in a file under ``harness/`` is taken, in order, as "in file F"; calls into
  the standard library and third-party packages are skipped (a harness file calling ``subprocess`` stays
  in that file);
* consecutive events in the same file are one visit; the trace is the sequence of visits;
* **files entered** = distinct files in that sequence; **returns** = visits to a file that was already
  visited earlier in the sequence (visits minus files entered), also broken down per file.

Once the first run's server is up, the profiler raises an interrupt that ends the compare (the harness
reaps its server as on Ctrl-C). Prints the figures and the visit sequences. Needs mariadbd and sysbench
on PATH; takes about a minute.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/provision_trace.py
    PYTHONPATH=/some/other/checkout .venv/bin/python benchmarks/provision_trace.py   # that checkout's harness
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import harness

HARNESS = str(Path(harness.__file__).resolve().parent) + "/"  # the harness on PYTHONPATH (main or a worktree)


class TraceDone(KeyboardInterrupt):
    """Raised in the traced run once it holds a started server: ends the compare (its server is reaped)."""


class Trace:
    def __init__(self) -> None:
        self.on = False
        self.done = False
        self.visits: list[str] = []  # from pipeline.flow.compare
        self.provisioning = 0  # index in visits where the first server was asked for (Session.instance)
        self.first: FrameType | None = None  # that call's frame
        self.first_served = 0  # index in visits where it yielded its started server

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "return" and frame is self.first and not self.first_served:
            self.first_served = len(self.visits)
        if event != "call" or self.done:
            return
        path = frame.f_code.co_filename
        if not path.startswith(HARNESS):
            return
        name = frame.f_code.co_name
        rel = path[len(HARNESS) :]
        if not self.on:
            if rel == "pipeline/flow.py" and name == "compare":
                self.on = True
            else:
                return
        if self.first is None and rel == "measure/session.py" and name == "instance":
            self.provisioning = len(self.visits)
            self.first = frame
        if rel == "measure/context.py" and name == "read" and "Served" in frame.f_code.co_qualname:
            self.done = True
            sys.setprofile(None)
            raise TraceDone("trace done")
        if not self.visits or self.visits[-1] != rel:
            self.visits.append(rel)


def main() -> int:
    from harness.cli import main as cli

    trace = Trace()
    with tempfile.TemporaryDirectory(prefix="dbperf-trace-") as tmp:
        args = [
            "compare",
            "--base",
            "mariadb-local",
            "--head-var",
            "sort_buffer_size=4M",
            "--scenario",
            "oltp_point_select",
            "--profile",
            "quick",
            "--threads",
            "1",
            "--time",
            "1",
            "--warmup",
            "0",
            "--no-cost",
            "--yes",
            "--cache-dir",
            str(Path(tmp) / "cache"),
            "--store",
            str(Path(tmp) / "store.duckdb"),
        ]
        sys.setprofile(trace)
        try:
            cli(args)
        except (SystemExit, KeyboardInterrupt):
            pass
        finally:
            sys.setprofile(None)
    if not trace.done:
        print("the trace never reached a started server (Served.read); the figures below are incomplete")
    for title, visits in (
        (
            "provisioning (Session.instance to its started server)",
            trace.visits[trace.provisioning : trace.first_served],
        ),
        ("whole window (pipeline.compare to the started server)", trace.visits),
    ):
        counts = Counter(visits)
        print(f"{title}: files entered {len(counts)}, returns {len(visits) - len(counts)}")
        for path, n in counts.most_common():
            if n > 1:
                print(f"  {path}: {n - 1}")
        print("  visits: " + " > ".join(visits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
