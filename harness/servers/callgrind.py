"""Starting a server under valgrind's callgrind and talking to it with ``callgrind_control``.

The recipe: collection is toggled on the statement-dispatch function, so only the work of executing
statements counts (the server's start-up, background threads outside dispatch and the client's idle time
do not); instrumentation starts only when asked (``--instr-atstart=no``, then ``callgrind_control -i on``
after the warm-up), which speeds start-up and warm-up without changing the counts; counts are
dumped on request into a folder the host can read::

    valgrind --tool=callgrind --callgrind-out-file=DIR/cg.out.%p --toggle-collect='dispatch_command*'
             --dump-line=no --dump-instr=no --instr-atstart=no --collect-systime=yes
             --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=33554432,16,64
             mariadbd ... --innodb-use-native-aio=0

``--collect-systime=yes`` (valgrind 3.19, 3.24 and 3.27 all take ``no|yes|msec|usec|nsec``) adds the
events ``sysCount sysTime`` after ``Ir``: the system calls made inside the collected code, booked to the
libc function that made them (docs/work-vector.md); sysTime is wall time and unused. ``--cache-sim=yes``
(``cache_sim``: a comparison's first cost run of each side) adds a simulated cache's misses (``I1mr``: the
32 KiB level-1 instruction cache's, and the data caches'), read from the dump's totals; the caches' sizes are
pinned (:data:`CACHES`), not taken from the host's CPU, so the counts do not depend on the machine. The
simulation makes the counted window take 2-2.5x as long (docs/work-vector.md), and its counts repeat as
instructions do, so one run of each side simulates.

``dispatch_command*`` matches the demangled names in Debian's MariaDB 10.11, MariaDB 11.8 and MySQL
9.7 builds. MariaDB 10.11.19+ and 11.x need ``innodb_buffer_pool_size_max`` equal to the pool size
under valgrind ("Cannot map innodb_buffer_pool_size_max"), and without native AIO switched off the
server never becomes ready; MariaDB 11.x generates a TLS certificate at every start (slow under
valgrind), which ``skip-ssl`` avoids (sysbench does not use TLS). In a container valgrind must not be PID 1
(the container runs with an init), ``callgrind_control`` runs inside it (its FIFOs live in the
server's /tmp, gone with the container), and the pid it needs is the one ``vgdb -l`` lists there. A local
server's valgrind makes its three gdbserver FIFOs (``vgdb-pipe-*``) in the run's own dump folder
(``--vgdb-prefix``, :func:`vgdb_prefix`), which is removed with the run whatever ends it: in TMPDIR, where
valgrind puts them by default, a killed server left them behind.

glibc's allocator is pinned for counted servers (:data:`MALLOC_TUNABLES`): the mmap threshold is held
at glibc's default, since glibc raises it for every thread the first time any thread frees a large mapped
block (a moment of thread timing, which moved malloc's instruction count), and the arena cap is lifted
above the server's thread count, so no connection thread shares an arena with a background thread by the
order in which they first allocated. Counted MySQL servers neither spin, flush pages in the background,
buffer secondary-index changes nor load the buffer pool's pages at start-up (:data:`COUNTED_VARIABLES`).
The counts each of these moved, measured: docs/cost-noise.md.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.config.option_names import normal
from harness.errors import ServerError
from harness.workspace import child_environment

TOGGLE = "dispatch_command*"
#: The simulated caches (size, ways, line bytes): level-1 instruction and data caches of 32 KiB as in most
#: x86-64 cores, and a last level of 32 MiB. Pinned, so the miss counts do not follow the host's CPU.
CACHES = ("--I1=32768,8,64", "--D1=32768,8,64", "--LL=33554432,16,64")
#: Start-up under valgrind takes 5-46 s on a quiet machine and several minutes on a loaded one.
READY_TIMEOUT_S = 900.0
#: glibc malloc tunables a counted server runs with: the mmap threshold held at glibc's default (128 KiB),
#: which switches off its dynamic adjustment, and room for an arena per thread (see the module docstring).
#: MySQL 9.7's tcmalloc ignores them.
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=64"
CONTROL_TIMEOUT_S = 300.0
#: InnoDB settings a counted MySQL server runs with, each removing background work whose timing moved the
#: statement thread's count: no spinning on held mutexes (under valgrind one thread runs at a time), no
#: background page flushing below the dirty-page maximum, no change buffering, no buffer-pool load at start-up
#: (the prewarm fills the pool instead) and no background statistics recalculation (the prewarm computes them
#: exactly: :mod:`harness.measure.prewarm`). None of them is work of the statement: a change in what a
#: statement does still counts the same way on both sides. MariaDB's counts repeat with its own defaults.
#: The count each one moved, measured: docs/cost-noise.md.
COUNTED_VARIABLES: dict[str, dict[str, str]] = {
    "mysql": {
        "innodb_buffer_pool_load_at_startup": "OFF",
        "innodb_change_buffering": "none",
        "innodb_spin_wait_delay": "0",
        "innodb_sync_spin_loops": "0",
        "innodb_max_dirty_pages_pct_lwm": "0",
        "innodb_adaptive_flushing": "OFF",
        "innodb_idle_flush_pct": "0",
        "innodb_stats_auto_recalc": "OFF",
    },
}


@dataclass(frozen=True)
class Callgrind:
    """How to start a server under callgrind (the provider decides where the dump folder is)."""

    toggle: str = TOGGLE
    cache_sim: bool = True  # simulate the caches (:data:`CACHES`): their misses join the counts

    def argv(self, out_dir: str, *, vgdb_dir: str = "") -> list[str]:
        """valgrind's arguments; ``vgdb_dir``: the folder its gdbserver FIFOs go in (TMPDIR when not given)."""
        return [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out_dir}/cg.out.%p",
            f"--toggle-collect={self.toggle}",
            "--dump-line=no",
            "--dump-instr=no",
            "--instr-atstart=no",
            "--collect-systime=yes",
            *(("--cache-sim=yes", *CACHES) if self.cache_sim else ()),
            *([f"--vgdb-prefix={vgdb_prefix(vgdb_dir)}"] if vgdb_dir else []),
        ]

    @staticmethod
    def variables(flavour: str, variables: Mapping[str, str]) -> dict[str, str]:
        """Server variables of a counted server: what valgrind needs (no native AIO, MariaDB's pool maximum
        equal to its size), over the server's own variables, over :data:`COUNTED_VARIABLES` (which a
        server's own ``[variables]`` or ``--head-var`` may set otherwise)."""
        extra = {"innodb_use_native_aio": "0"}
        if flavour == "mariadb":
            # the last setting of the pool's size, however spelled (``innodb-buffer-pool-size`` after the
            # pinned ``innodb_buffer_pool_size``): the one the server reads (harness/config/option_names.py)
            sizes = [v for k, v in variables.items() if normal(k).removeprefix("loose_") == "innodb_buffer_pool_size"]
            extra["loose-innodb_buffer_pool_size_max"] = sizes[-1] if sizes else "512M"
            extra["skip_ssl"] = "ON"
        return {**COUNTED_VARIABLES.get(flavour, {}), **variables, **extra}


def vgdb_prefix(folder: str) -> str:
    """The ``--vgdb-prefix`` that puts valgrind's FIFOs in ``folder`` (valgrind and its tools need the same)."""
    return f"{folder}/vgdb-pipe"


def server_environment(inherited: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment variables a counted server is started with (added to ``inherited``'s own tunables)."""
    own = (inherited or {}).get("GLIBC_TUNABLES", "")
    return {"GLIBC_TUNABLES": f"{own}:{MALLOC_TUNABLES}" if own else MALLOC_TUNABLES}


def valgrind_version(prefix: Sequence[str] = ()) -> str:
    """``valgrind-3.19.0``: the version that counted (host, or ``docker exec C`` as ``prefix``)."""
    if not prefix and shutil.which("valgrind") is None:
        raise ServerError("valgrind is not installed; cost mode needs it: apt-get install valgrind")
    out = subprocess.run(
        [*prefix, "valgrind", "--version"], capture_output=True, text=True, check=False, env=child_environment()
    )
    version = out.stdout.strip()
    if out.returncode != 0 or not version.startswith("valgrind-"):
        where = "in the server's image (rebuild it with tools/build-images.sh --force)" if prefix else "on this host"
        raise ServerError(f"valgrind does not run {where}: {(out.stderr or out.stdout).strip()[:200]}")
    return version


class Control:
    """``callgrind_control`` for one server: zero the counters, dump them, find the dump file.

    ``prefix`` runs the command elsewhere (``docker exec CONTAINER``); ``out_dir`` is the host folder
    the dumps land in; ``pid`` is the valgrind process as ``callgrind_control`` sees it (found with
    ``vgdb -l`` when not given); ``vgdb_dir`` is the folder valgrind was told to put its FIFOs in
    (:meth:`Callgrind.argv`).
    """

    def __init__(self, out_dir: Path, pid: int | None, prefix: Sequence[str] = (), *, vgdb_dir: str = "") -> None:
        self.out_dir = out_dir
        self.prefix = list(prefix)
        self._pid = pid
        self._vgdb = [f"--vgdb-prefix={vgdb_prefix(vgdb_dir)}"] if vgdb_dir else []

    @property
    def pid(self) -> int:
        if self._pid is None:
            out = self._run(["vgdb", *self._vgdb, "-l"], "list valgrind processes", check=False)
            pids = re.findall(r"use --pid=(\d+) for \S*valgrind", out)
            if len(pids) != 1:
                raise ServerError(f"expected one valgrind process in the server, vgdb -l says: {out.strip()[:200]}")
            self._pid = int(pids[0])
        return self._pid

    def _run(self, argv: list[str], what: str, *, check: bool = True) -> str:
        try:
            out = subprocess.run(
                [*self.prefix, *argv],
                capture_output=True,
                text=True,
                timeout=CONTROL_TIMEOUT_S,
                check=False,
                env=child_environment(),
            )
        except subprocess.TimeoutExpired:
            raise ServerError(f"callgrind did not answer '{what}' within {CONTROL_TIMEOUT_S:.0f} s") from None
        except OSError as exc:
            raise ServerError(f"cannot run {argv[0]} ({exc.strerror}); install valgrind") from exc
        if check and (out.returncode != 0 or "Error" in out.stdout):
            detail = (out.stderr or out.stdout).strip().splitlines()
            raise ServerError(f"callgrind_control could not {what}: {detail[-1] if detail else out.returncode}")
        return out.stdout

    def zero(self) -> None:
        """Switch instrumentation on and zero the counters: the measured window starts now."""
        self._run(["callgrind_control", *self._vgdb, "-i", "on", str(self.pid)], "switch instrumentation on")
        self._run(["callgrind_control", *self._vgdb, "-z", str(self.pid)], "zero the counters")

    def dump(self, label: str) -> Path:
        """Dump the counters since the last zero; returns the new dump file on the host."""
        before = set(self.out_dir.glob("cg.out.*"))
        self._run(["callgrind_control", *self._vgdb, "-d", label, str(self.pid)], "dump the counters")
        new = sorted(set(self.out_dir.glob("cg.out.*.*")) - before)
        if not new:
            raise ServerError(f"callgrind wrote no dump into {self.out_dir}")
        return new[-1]
