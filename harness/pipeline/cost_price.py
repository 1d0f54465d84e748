"""What one cost run takes before this machine has run it: the instructions it will execute under callgrind.

A cost run's wall time is a fixed part (the server started under valgrind, MySQL's buffer-pool prewarm, the
profile dumped, the server stopped, the run saved) plus its events at a price that follows how many
instructions each one executes under callgrind. The instructions per transaction come
from the committed cost baseline of the scenario (``baselines/cost/mariadb-local/<scenario>/quick/1t.json``,
shipped with the package) read as :mod:`harness.judge.baselines` reads it, scaled for a server family other
than MariaDB by how many more instructions it executes for the same transaction. A scenario with no
committed baseline is priced at :data:`ASSUMED_INSTR_PER_TXN`. Every figure here is an idle machine's: the
middle of two runners of one VM type that measured about 1.7x apart (docs/usage.md, "Estimates: an
unmeasured cost run").
"""

from __future__ import annotations

import functools
import re
import statistics
from pathlib import Path

from harness.config.packaged import PACKAGED_COST_BASELINES
from harness.errors import HarnessError
from harness.judge.baselines import cost_baseline_path, load_baseline
from harness.model import Scenario, Server

#: The server and profile whose committed cost baselines price every catalogue scenario's transactions.
REFERENCE_SERVER = "mariadb-local"
REFERENCE_PROFILE = "quick"
#: Per run, by server family, on a local server: start under valgrind (+ prewarm), dump, stop, save (docs/usage.md).
FIXED_S = {"mariadb": 4.0, "mysql": 13.5}
#: Added per run by a container server: the container's start and removal (docs/usage.md, "Estimates").
CONTAINER_S = 4.5
#: The measured window, per transaction and per instruction it executes under callgrind (docs/usage.md).
WINDOW_TXN_S = 0.0014
WINDOW_INSTR_S = 15e-9
#: The window of a run that simulates the caches (the first of each side: harness.measure.cost) over a plain
#: one's: oltp_read_only 2.05x, tpcc 2.47x (docs/usage.md). Spread over a scenario's cost repetitions.
SIMULATED_WINDOW = 2.3
#: The warm-up, which callgrind does not count (instrumentation off): per transaction and per instruction.
WARMUP_TXN_S = 0.0007
WARMUP_INSTR_S = 3.5e-9
#: A family's instructions per transaction over MariaDB's, same scenario and dataset (docs/usage.md).
FAMILY_INSTR = {"mariadb": 1.0, "mysql": 1.25}
#: A scenario with no committed cost baseline: about the catalogue's median transaction.
ASSUMED_INSTR_PER_TXN = 200_000.0


@functools.cache
def _baseline_instructions(path: Path) -> float | None:
    """The median instructions per transaction of the cost baseline at ``path`` (None: none readable)."""
    if not path.is_file():
        return None
    try:
        samples = load_baseline(path).samples.get("instr_per_txn", ())
    except HarnessError:
        return None
    return statistics.median(samples) if samples else None


def instructions_per_txn(scenario: str, flavour: str, root: Path = PACKAGED_COST_BASELINES.parent) -> float:
    """The instructions one transaction of ``scenario`` executes on a server of ``flavour``: the reference
    server's committed cost baseline, scaled by the family's :data:`FAMILY_INSTR`."""
    path = cost_baseline_path(root, REFERENCE_SERVER, scenario, REFERENCE_PROFILE, 1)
    found = _baseline_instructions(path)
    return (ASSUMED_INSTR_PER_TXN if found is None else found) * FAMILY_INSTR.get(flavour, 1.0)


def cost_run_seconds(
    scenario: Scenario, server: Server | None = None, root: Path = PACKAGED_COST_BASELINES.parent
) -> float:
    """One cost run's wall time on an idle machine (``server`` None: a local MariaDB), its instructions per
    transaction from the cost baselines under ``root`` (the ones the package carries): the mean over the
    scenario's cost repetitions, the first of which simulates the caches (:data:`SIMULATED_WINDOW`)."""
    flavour = server.flavour if server is not None else "mariadb"
    fixed = FIXED_S.get(flavour, FIXED_S["mariadb"])
    if server is not None and server.provider == "container":
        fixed += CONTAINER_S
    instr = instructions_per_txn(re.split(r"[@(]", scenario.name)[0], flavour, root)  # a side's "S@base" is S
    window = scenario.cost.events * (WINDOW_TXN_S + instr * WINDOW_INSTR_S)
    window *= 1.0 + (SIMULATED_WINDOW - 1.0) / max(1, scenario.cost.repetitions)
    warmup = scenario.cost.warmup_events * (WARMUP_TXN_S + instr * WARMUP_INSTR_S)
    return fixed + warmup + window
