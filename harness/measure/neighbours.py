"""Other dbperf runs measuring on the same CPUs at the same time: their numbers are not comparable.

Every dbperf process keeps its servers' and sysbench's files in its owner-stamped workspace
(:mod:`harness.workspace`), so their command lines name it (``--defaults-file=.../dbperf-<pid>-<start>/...``,
``sysbench .../dbperf-<pid>-<start>/sysbench-*/dbperf_run.lua``). A scan of ``/proc`` finds the live
ones of other dbperf processes and the CPUs they may run on; any overlap with this run's CPU sets
is worth a warning on the terminal and a note in the stored run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness.model import Server

_OWNED = re.compile(rb"/dbperf-(\d+)-\d+/|/dbperf-(?:local|sysbench|container|datadir)-")


def parse_cpus(text: str) -> set[int]:
    """``"0-2,5"`` -> {0, 1, 2, 5}."""
    cpus: set[int] = set()
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if low.isdigit():
            cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def run_cpus(server: Server) -> set[int]:
    """The CPUs this run's server and sysbench may use (every CPU when one of them is not pinned)."""
    if server.cpuset and server.client_cpuset:
        return parse_cpus(server.cpuset) | parse_cpus(server.client_cpuset)
    return set(os.sched_getaffinity(0))


def others_on(cpus: set[int]) -> dict[int, set[int]]:
    """Other dbperf processes (pid, 0 when unknown) whose servers or sysbench run on any of ``cpus``."""
    me = os.getpid()
    found: dict[int, set[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == me:
            continue
        try:
            match = _OWNED.search((proc / "cmdline").read_bytes())
            if match is None:
                continue
            owner = int(match.group(1) or 0)
            shared = os.sched_getaffinity(int(proc.name)) & cpus
        except (OSError, ValueError):
            continue
        if owner != me and shared:
            found.setdefault(owner, set()).update(shared)
    return found


def crowding_note(server: Server) -> str:
    """One sentence about other dbperf runs on this run's CPUs, or "" when there are none."""
    others = others_on(run_cpus(server))
    if not others:
        return ""
    who = ", ".join(f"pid {pid}" if pid else "an older dbperf" for pid in sorted(others))
    cpus = ",".join(str(c) for c in sorted(set().union(*others.values())))
    return (
        f"other dbperf runs ({who}) were measuring on the same CPUs ({cpus}) at the same time: "
        "these numbers are not comparable with runs on a quiet machine"
    )
