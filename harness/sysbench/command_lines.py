"""sysbench's command lines: the connection's option file, the folder holding the wrapper, and argv for runs.

sysbench 1.0.20 has no machine-readable report, so dbperf runs each scenario through a small wrapper
script (``wrapper.lua``, beside this module) that ``require``\\ s the scenario's script and replaces the
report hooks with one prefixed JSON line per report (``@dbperf {...}``, read by :mod:`harness.sysbench.run_output`),
written with a single ``io.write``. The wrapper is written into a folder dbperf controls (sysbench
searches the working directory first for ``require``).

``prepare`` loads the same rows every time: sysbench 1.0.20's ``--rand-seed`` does not make it repeat, so the
wrapper replaces the generators a loader draws from with a seeded one while each table is filled
(``--dbperf-seeded-load``; ``DATASET_LOADER`` in harness.config.scenarios names this version of the rows).
"""

from __future__ import annotations

import os
import re
import shutil
import string
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from harness import workspace
from harness.config.scenarios import BUNDLED_SCRIPTS, resolve_script
from harness.errors import SysbenchError
from harness.model import Scenario
from harness.model.endpoint import Endpoint
from harness.sysbench.run_output import PREFIX

#: The Lua wrapper around every scenario script (``$module``: the script's module, ``$prefix``: PREFIX).
_WRAPPER = string.Template((resources.files("harness.sysbench") / "wrapper.lua").read_text())


def mask(argv: list[str]) -> list[str]:
    """The command line with the password replaced, for logs and the store."""
    return [re.sub(r"^(--mysql-password=).*$", r"\1***", a) for a in argv]


SECRETS_FILE = "dbperf-connection.cfg"
_CONFIG_LINE_MAX = 250  # sysbench reads option files in lines of 256 bytes


def connection_args(endpoint: Endpoint, folder: Path) -> list[str]:
    """sysbench's connection options, the password in a 0600 option file in ``folder`` (not in argv).

    sysbench 1.0.20 has no password file option, but it reads any option from ``--config-file``
    (``name=value`` lines; a value in double or single quotes may hold spaces, commas and ``#``).
    The command line is readable by every user through ``ps`` and ``/proc/*/cmdline``; the file is
    readable only by its owner, in a folder only dbperf uses, and removed with it.
    """
    args = endpoint.sysbench_args()
    if not endpoint.password:
        return args
    password = endpoint.password
    quote = '"' if '"' not in password else "'"
    if quote in password or "\n" in password or len(password) > _CONFIG_LINE_MAX - 20:
        raise SysbenchError(
            f"the password of {endpoint.user}@{endpoint.host}:{endpoint.port} cannot be handed to sysbench "
            "safely (it holds both quote characters, a line break, or more than 230 characters): change it"
        )
    path = folder / SECRETS_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(f"mysql-password={quote}{password}{quote}\n")
    return [*args, f"--config-file={path}"]


@contextmanager
def workdir(scenario: Scenario) -> Iterator[tuple[Path, Path]]:
    """A folder in this process's workspace holding the wrapper (and a custom script, and the
    connection's option file); yields (folder, wrapper path)."""
    with workspace.current().temp("sysbench") as folder:
        yield _fill(scenario, folder)


def _fill(scenario: Scenario, folder: Path) -> tuple[Path, Path]:
    if scenario.script in BUNDLED_SCRIPTS:
        module = scenario.script
    else:
        scenarios_dir = scenario.source.parent if scenario.source else Path("scenarios")
        source = resolve_script(scenario.script, scenarios_dir)
        module = "dbperf_custom_" + re.sub(r"\W", "_", source.stem)
        # the modules beside the script (e.g. dbperf_ops.lua) are found by require() under their own names
        for sibling in sorted(source.parent.glob("*.lua")):
            if sibling != source:
                shutil.copyfile(sibling, folder / sibling.name)
        shutil.copyfile(source, folder / f"{module}.lua")
    wrapper = folder / "dbperf_run.lua"
    wrapper.write_text(_WRAPPER.substitute(module=module, prefix=PREFIX))
    return folder, wrapper


def dataset_args(scenario: Scenario) -> list[str]:
    return [f"--tables={scenario.tables}", f"--table-size={scenario.table_size}"]


def forced_shutdown_s(total_s: int, threads: int) -> int:
    """Seconds sysbench waits after --time for in-flight transactions before it shuts a run down."""
    return max(10, total_s // 5, threads // 32)


def run_argv(
    scenario: Scenario, endpoint: Endpoint, wrapper: Path, threads: int, client_cpuset: str | None
) -> list[str]:
    total = scenario.warmup_s + scenario.time_s
    argv = [
        "sysbench",
        str(wrapper),
        *connection_args(endpoint, wrapper.parent),
        *dataset_args(scenario),
        f"--threads={threads}",
        f"--time={total}",
        "--events=0",
        "--report-interval=1",
        "--histogram=on",
        f"--percentile={scenario.percentile}",
        f"--rand-type={scenario.rand_type}",
        # the drain after --time grows with the threads in flight: 1024 read/write threads on a loaded
        # 2-core machine took more than 10 s to finish their transactions; a statement blocked for
        # this long (32 s at 1024 threads) is still a stall
        f"--forced-shutdown={forced_shutdown_s(total, threads)}",
        *(f"--{k}={v}" for k, v in scenario.options.items()),
    ]
    if scenario.warmup_s > 0:
        argv.append(f"--report-checkpoints={scenario.warmup_s}")
        argv.append(f"--dbperf-warmup-s={scenario.warmup_s}")  # the per-operation protocol's cut
    argv.append("run")
    if client_cpuset:
        argv = ["taskset", "-c", client_cpuset, *argv]
    return argv


def cost_argv(
    scenario: Scenario,
    endpoint: Endpoint,
    wrapper: Path,
    threads: int,
    events: int,
    client_cpuset: str | None,
    *,
    seed: int,
    rollback: bool = False,
) -> list[str]:
    """A fixed number of transactions (``--events``, no time limit): a cost run counts work, not seconds.

    ``--db-ps-mode`` is pinned (server-side prepared statements, unless the scenario says otherwise):
    the text protocol costs the server far more instructions per query (docs/method.md). ``--rand-seed`` is
    ``seed``: the warm-up and the measured window each pass their own fixed seed (``[cost]``
    ``warmup_seed`` and ``seed``), so both sides of a comparison issue the same statements and the
    measured window does not replay the warm-up's. A ``rand-seed`` in the scenario's ``[options]``
    applies to timing runs only. ``rollback`` runs each event inside ``BEGIN`` ... ``ROLLBACK`` (a warm-up
    that leaves the tables as they were, ``[cost] warmup = "rollback"``).
    """
    argv = [
        "sysbench",
        str(wrapper),
        *connection_args(endpoint, wrapper.parent),
        *dataset_args(scenario),
        f"--threads={threads}",
        "--time=0",
        f"--events={events}",
        "--report-interval=0",
        f"--rand-type={scenario.rand_type}",
        *(f"--{k}={v}" for k, v in scenario.options.items() if k.replace("_", "-") != "rand-seed"),
    ]
    if "db-ps-mode" not in scenario.options:
        argv.append("--db-ps-mode=auto")
    argv.append(f"--rand-seed={seed}")  # the same rows on both sides (multi-threaded runs still interleave)
    if rollback:
        argv.append("--dbperf-rollback=on")
    argv.append("run")
    return ["taskset", "-c", client_cpuset, *argv] if client_cpuset else argv


def prepare_argv(scenario: Scenario, endpoint: Endpoint, wrapper: Path, threads: int) -> list[str]:
    return [
        "sysbench",
        str(wrapper),
        *connection_args(endpoint, wrapper.parent),
        *dataset_args(scenario),
        f"--threads={max(1, min(threads, scenario.tables))}",
        *(f"--{k}={v}" for k, v in scenario.options.items()),
        "--dbperf-seeded-load=on",  # the same rows on every preparation (the wrapper's seeded load)
        "prepare",
    ]
