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
  visited earlier in the sequence (visits minus files entered), also broken down per file;
* **entries** (the measure of "enters each stage once"): a call into a harness file from a function in
  another harness file (the nearest harness frame up the stack is the caller; standard-library frames in
  between are skipped), counted against the file entered. A callee returning to its caller is not an
  entry, and a loop's repeated identical call edge is one entry: the same caller frame (one invocation of
  the caller function) calling the same callee function again counts once (a readiness poll that calls
  ``provider.py`` fifty times from one ``local.py`` frame is one entry). **re-entries** = entries minus
  files entered: each time control comes back into a stage from elsewhere along the path, beyond the first;
* **stage entries**: the same, with the edge collapsed by the file entered instead of the function (one
  invocation of ``LocalProvider.serve`` calling ``Workspace.make``, ``track`` and ``untrack`` enters
  ``workspace.py`` once); **stage re-entries** = stage entries minus files entered.

* **pipeline stages** (docs/provisioning.md, "Each stage once"): a file's stage is its package under
  ``harness/`` (``servers``, ``measure``, ...) or its top-level module (``dataset``); the records and this
  process's registry (``SHARED``) are not stages. A call from one stage into another counts once per
  (caller frame, stage entered); re-entries = stage entries minus stages entered. Printed for the
  provisioning window, the first measured run's own start (its last ``Provisioner.started`` call) and the
  whole window.

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


#: Modules every stage uses and that are not stages themselves: the records (layer 1 of docs/architecture.md)
#: and this process's registry of folders and processes, which every process start asks.
SHARED = ("model/", "errors.py", "crash.py", "bounded_json.py", "workspace.py")


def stage_of(rel: str) -> str | None:
    """The pipeline stage a harness file belongs to: its package (``servers``, ``measure``, ...) or its
    top-level module (``dataset``); None for a shared module."""
    if rel.startswith(SHARED):
        return None
    return rel.split("/", 1)[0].removesuffix(".py")


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
        self.entries: list[tuple[str, str]] = []  # (file entered, "caller file:function > callee function")
        self.stage_entries: list[int] = []  # indexes into entries of the first entry per (caller frame, file)
        self.edges: dict[int, set[Any]] = {}  # per live caller frame: callee code objects it has entered
        self.entries_at_provisioning = 0
        self.entries_at_served = 0
        self.layer_entries: list[tuple[str, str]] = []  # (stage entered, "caller stage:function > callee")
        self.layer_edges: dict[int, set[str]] = {}  # per live caller frame: the stages it has entered
        self.layers_at_provisioning = 0
        self.layers_at_served = 0
        self.layers_at_last_start = 0  # the last Provisioner.started call: the first measured run's own

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "return" and frame is self.first and not self.first_served:
            self.first_served = len(self.visits)
            self.entries_at_served = len(self.entries)
            self.layers_at_served = len(self.layer_entries)
        if event == "return":
            self.edges.pop(id(frame), None)
            self.layer_edges.pop(id(frame), None)
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
            self.entries_at_provisioning = len(self.entries)
            self.layers_at_provisioning = len(self.layer_entries)
            self.first = frame
        if rel == "measure/provision.py" and frame.f_code.co_qualname == "Provisioner.started":
            self.layers_at_last_start = len(self.layer_entries)
        if rel == "measure/context.py" and name == "read" and "Served" in frame.f_code.co_qualname:
            self.done = True
            sys.setprofile(None)
            raise TraceDone("trace done")
        if not self.visits or self.visits[-1] != rel:
            self.visits.append(rel)
        self.enter(frame, rel)
        self.enter_stage(frame, rel)

    def enter_stage(self, frame: FrameType, rel: str) -> None:
        """A call into another pipeline stage, once per (caller frame, stage entered)."""
        stage = stage_of(rel)
        if stage is None:
            return
        caller = frame.f_back
        while caller is not None:
            path = caller.f_code.co_filename
            if path.startswith(HARNESS) and stage_of(path[len(HARNESS) :]) is not None:
                break
            caller = caller.f_back
        if caller is None:
            return
        caller_stage = stage_of(caller.f_code.co_filename[len(HARNESS) :])
        if caller_stage == stage:
            return
        seen = self.layer_edges.setdefault(id(caller), set())
        if stage in seen:
            return
        seen.add(stage)
        self.layer_entries.append((stage, f"{caller_stage}:{caller.f_code.co_qualname} > {frame.f_code.co_qualname}"))

    def enter(self, frame: FrameType, rel: str) -> None:
        caller = frame.f_back
        while caller is not None and not caller.f_code.co_filename.startswith(HARNESS):
            caller = caller.f_back
        if caller is None:
            return
        caller_rel = caller.f_code.co_filename[len(HARNESS) :]
        if caller_rel == rel:
            return
        seen = self.edges.setdefault(id(caller), set())
        if frame.f_code in seen:
            return
        seen.add(frame.f_code)
        if rel not in seen:
            seen.add(rel)
            self.stage_entries.append(len(self.entries))
        edge = f"{caller_rel}:{caller.f_code.co_qualname} > {frame.f_code.co_qualname}"
        self.entries.append((rel, edge))


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
    served = trace.entries_at_served or len(trace.entries)
    for title, visits, window in (
        (
            "provisioning (Session.instance to its started server)",
            trace.visits[trace.provisioning : trace.first_served],
            range(trace.entries_at_provisioning, served),
        ),
        ("whole window (pipeline.compare to the started server)", trace.visits, range(len(trace.entries))),
    ):
        entries = [trace.entries[i] for i in window]
        stages = Counter(trace.entries[i][0] for i in trace.stage_entries if i in window)
        counts = Counter(visits)
        print(f"{title}: files entered {len(counts)}, returns {len(visits) - len(counts)}")
        for path, n in counts.most_common():
            if n > 1:
                print(f"  {path}: {n - 1}")
        print("  visits: " + " > ".join(visits))
        entered = Counter(path for path, _ in entries)
        print(
            f"  entries: files entered {len(entered)}, entries {len(entries)}, re-entries {len(entries) - len(entered)}"
        )
        for path, n in entered.most_common():
            if n > 1:
                edges = sorted({edge for p, edge in entries if p == path})
                print(f"    {path}: entered {n} times: " + "; ".join(edges))
        total = sum(stages.values())
        print(f"  stage entries: files entered {len(stages)}, entries {total}, re-entries {total - len(stages)}")
        for path, n in stages.most_common():
            if n > 1:
                print(f"    {path}: entered {n} times")
    layer_windows = (
        ("provisioning", range(trace.layers_at_provisioning, trace.layers_at_served or len(trace.layer_entries))),
        (
            "the first measured run's start (snapshot found)",
            range(trace.layers_at_last_start, len(trace.layer_entries)),
        ),
        ("whole window", range(len(trace.layer_entries))),
    )
    for title, window in layer_windows:
        entries = [trace.layer_entries[i] for i in window]
        entered = Counter(stage for stage, _ in entries)
        print(
            f"{title}: pipeline stages entered {len(entered)}, entries {len(entries)}, "
            f"re-entries {len(entries) - len(entered)}"
        )
        for stage, n in entered.most_common():
            edges = sorted({edge for s, edge in entries if s == stage})
            print(f"    {stage}: entered {n} time(s): " + "; ".join(edges))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
