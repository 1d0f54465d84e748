"""The forecast's records: a runner's calibration (unit times) and a cost comparison's forecast of time.

A cost comparison counts work (instructions, fsyncs, page reads, writes, statements per transaction); the
calibration says what one unit of each costs in time on this runner, measured on it by ``dbperf
calibrate``; the forecast multiplies the two into each side's time per transaction at one client and the
change of single-client throughput and latency it implies (docs/forecast.md). A forecast is never a
measurement: reports label it so, and it decides nothing unless the ``forecast-gate`` setting is on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

from harness import bounded_json
from harness.errors import HarnessError
from harness.model.validation import first_problem

CALIBRATION_FORMAT = 2
"""The version of a calibration file; raised when a field changes meaning or goes away (2: a server's CPU
per statement beside its CPU per instruction, from two scenarios; fdatasync at several write sizes)."""

#: Where a forecast holds when the sweep gives no limit of its own (harness.judge.cost_forecast.holds_for).
ONE_CLIENT = "1 client only: concurrency, lock waits and background work are outside the model"

#: The work-vector component of the code a transaction fetched (a simulated 32 KiB L1i's misses), and the
#: label of its forecast term.
ICACHE, ICACHE_TERM = "icache_misses", "L1i misses"

#: The runner's unit times that do not depend on the server, in report order, and what each one is.
IO_UNITS: dict[str, str] = {
    "fsync": "fsync of 4 KiB just written to a file on the data folder's file system",
    "fdatasync": "fdatasync of 4 KiB just written, as a redo log commit syncs it",
    "fdatasync_16k": "fdatasync of 16 KiB just written (a commit of more redo)",
    "fdatasync_64k": "fdatasync of 64 KiB just written (a commit of more redo)",
    "fdatasync_idle_500us": "fdatasync of 4 KiB just written, 0.5 ms after the previous sync",
    "fdatasync_idle_2ms": "fdatasync of 4 KiB just written, 2 ms after the previous sync",
    "fdatasync_idle_8ms": "fdatasync of 4 KiB just written, 8 ms after the previous sync",
    "page_read": "read of a 16 KiB page not in any cache, as InnoDB reads it",
    "write": "pwrite of 4 KiB, as the redo log writes it",
    "loopback": "TCP round trip of one byte over 127.0.0.1 between two processes",
}

#: The fdatasync units by the bytes written before each sync; a commit's sync unit is interpolated
#: between them by the redo bytes per commit (harness.judge.cost_forecast.sync_unit).
SYNC_SIZES: tuple[tuple[int, str], ...] = ((4096, "fdatasync"), (16384, "fdatasync_16k"), (65536, "fdatasync_64k"))

#: The fdatasync units by the idle time before each sync (µs; the back-to-back 4 KiB ``fdatasync`` is the
#: one at 0): a sync costs more the longer since the previous one, and a commit's sync unit adds that
#: excess at the time the rest of its transaction takes per sync (harness.judge.cost_forecast.idle_excess).
SYNC_IDLE: tuple[tuple[float, str], ...] = (
    (500.0, "fdatasync_idle_500us"),
    (2000.0, "fdatasync_idle_2ms"),
    (8000.0, "fdatasync_idle_8ms"),
)

#: A write workload's cost window asks fresh keys (a short window after a warm-up): a query cache never
#: hits in it.
QUERY_CACHE_CAVEAT = (
    "query cache on: the cost window's keys are fresh, so its hits are not seen, only its overhead (docs/forecast.md)"
)
#: A read-only workload's cost window asks a cache filled with its own keys (harness.measure.cost).
QUERY_CACHE_FILLED_CAVEAT = (
    "query cache on: the cost window's keys were asked once before it, so it counts a warm cache's hits; "
    "a run too short to repeat its keys, or writes that empty the cache, gain less (docs/forecast.md)"
)
#: A cost run's note when it filled the query cache with its window's keys before the window.
QUERY_CACHE_FILLED_NOTE = "query cache filled with the measured window's own keys before the window"


def query_cache_on(variables: Mapping[str, str]) -> bool:
    """Whether a server's variables turn the query cache on (a type other than OFF and a size over 0)."""
    kind = variables.get("query_cache_type", "OFF").strip().upper()
    size = variables.get("query_cache_size", "0").strip()
    return kind not in {"OFF", "0", ""} and size.isdigit() and int(size) > 0


class CalibrationFileError(HarnessError):
    """A calibration file this dbperf cannot read: not JSON, a newer format, or a field of the wrong shape."""


class OldCalibrationError(CalibrationFileError):
    """A calibration file of an earlier format (one scenario, one sync size): it is measured again."""

    def __init__(self, found: int, servers: tuple[str, ...]) -> None:
        again = " and ".join(f"`dbperf calibrate --server {s}`" for s in servers) or "`dbperf calibrate --server S`"
        super().__init__(
            f"this testbed's calibration is of format {found}, before the two-scenario model: re-run {again}"
        )
        self.servers = servers


@dataclass(frozen=True)
class UnitTime:
    """One calibrated unit time in microseconds.

    ``value_us`` is the mean of every sample (throughput follows the mean time, tail included); ``low_us``
    and ``high_us`` the lowest and highest mean of the batches it was measured in, spread over the
    calibration (for a server's units: of its runs), which is the forecast's interval; ``p5_us``,
    ``p50_us`` and ``p95_us`` describe single samples (a fsync's median and 5-95 % range).
    """

    name: str
    value_us: float
    low_us: float
    high_us: float
    samples: int
    p5_us: float = 0.0
    p50_us: float = 0.0
    p95_us: float = 0.0
    how: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.low_us <= self.value_us <= self.high_us:
            raise ValueError(
                f"unit time {self.name}: needs 0 <= low <= value <= high, "
                f"got {self.low_us!r} <= {self.value_us!r} <= {self.high_us!r}"
            )


@dataclass(frozen=True)
class ScenarioWork:
    """What one calibration scenario's runs measured per transaction at one client: its cost run's
    instructions, statements and simulated instruction-cache misses (None: not counted), and its timing
    runs' server CPU and wall time (mean over the runs)."""

    scenario: str
    instr_per_txn: float
    statements_per_txn: float
    cpu_us: float
    wall_us: float
    icache_per_txn: float | None = None


@dataclass(frozen=True)
class ServerUnits:
    """What one server build's work costs on this runner, from timing and cost runs of CPU-bound scenarios
    at one client (harness.measure.server_units): server CPU time per statement (``cpu_statement``: the
    network system calls, the wake-up), per instruction counted in statement dispatch and per miss of a
    simulated 32 KiB L1 instruction cache (``icache_miss``: code fetched), solved from three scenarios, and
    the time each statement adds outside the server's CPU (``statement``: the client, the loopback: wall
    time minus server CPU, per statement). Without ``icache_miss`` (a calibration from before it, or a
    three-unknown solve that came out negative: ``icache_note`` says which) the CPU per statement and per
    instruction are solved from the first two scenarios; ``fallback`` says why that solve was not used
    (a negative unit): then the CPU per statement is 0 and the CPU per instruction is the first scenario's.
    ``page_read`` is the server's time per page read its buffer pool missed, measured with a small pool (the
    read and what the pool does for it); without it (not solved, or a calibration from before it) page reads
    are priced at the runner's bare page read, and ``page_read_note`` says why."""

    server: str
    build_id: str
    version: str
    instruction: UnitTime  # microseconds of server CPU per instruction
    cpu_statement: UnitTime  # microseconds of server CPU per statement
    statement: UnitTime  # microseconds per statement outside the server's CPU
    scenarios: tuple[ScenarioWork, ...]
    fallback: str = ""
    run_ids: tuple[str, ...] = ()
    page_read: UnitTime | None = None  # microseconds per page read the server's pool missed, in the server
    page_read_note: str = ""  # why there is no page_read
    icache_miss: UnitTime | None = None  # microseconds of server CPU per simulated L1i miss
    icache_note: str = ""  # why there is no icache_miss


@dataclass(frozen=True)
class Calibration:
    """A runner's calibration, kept per testbed fingerprint: a testbed that changes has none until
    ``dbperf calibrate`` measures it again."""

    testbed: str
    measured_at: str
    data_dir: str
    read_mode: str  # "O_DIRECT" or "buffered" (then each page is evicted before it is read)
    load: str  # the load averages while it was measured
    io: tuple[UnitTime, ...]
    servers: tuple[ServerUnits, ...] = ()
    format: int = CALIBRATION_FORMAT
    io_cpus: str = ""  # the CPUs the I/O units were measured on (the server's cpuset), "" when not pinned

    def unit(self, name: str) -> UnitTime | None:
        return next((u for u in self.io if u.name == name), None)

    def for_server(self, server: str, build_id: str = "") -> ServerUnits | None:
        """The units of a server build: the same build first (a ``--head-var`` side runs the base's binary
        under another name), else the same server name."""
        found = [s for s in self.servers if build_id and s.build_id == build_id]
        found = found or [s for s in self.servers if s.server == server]
        return found[-1] if found else None

    def document(self) -> dict[str, object]:
        return asdict(self)

    # read by pydantic for this record and every record in it: no coercion ("8" is not 8), no NaN
    __pydantic_config__: ClassVar[dict[str, bool]] = {"strict": True, "allow_inf_nan": False}


def read_calibration(text: str, source: str = "calibration.json") -> Calibration:
    """A calibration file read back, validated once against :class:`Calibration`'s records with pydantic.

    An earlier format raises :class:`OldCalibrationError` (measured again), a newer one or a file of the
    wrong shape :class:`CalibrationFileError`, one line naming the first field that is wrong.
    """
    from pydantic import TypeAdapter, ValidationError

    again = "run `dbperf calibrate` again"
    try:
        raw: Any = bounded_json.loads(text)
    except (bounded_json.JSONLimitError, json.JSONDecodeError, RecursionError) as exc:
        raise CalibrationFileError(f"{source}: not a calibration file ({exc}); {again}") from None
    if not isinstance(raw, dict):
        raise CalibrationFileError(f"{source}: not a calibration file (no JSON object); {again}")
    found = raw.get("format", 0)
    if not isinstance(found, int) or isinstance(found, bool) or found > CALIBRATION_FORMAT:
        raise CalibrationFileError(
            f"{source}: calibration format {str(found)[:20]} is newer than this dbperf reads ({CALIBRATION_FORMAT}); "
            "upgrade dbperf or run `dbperf calibrate` again"
        )
    if found < CALIBRATION_FORMAT:
        servers = raw.get("servers")
        servers = servers if isinstance(servers, list) else []
        raise OldCalibrationError(found, tuple(str(s.get("server", "")) for s in servers if isinstance(s, dict)))
    try:
        return TypeAdapter(Calibration).validate_json(text)
    except ValidationError as exc:
        raise CalibrationFileError(f"{source}: {first_problem(exc)}; {again}") from None


@dataclass(frozen=True)
class ForecastTerm:
    """One component of the time per transaction: its count per transaction on each side, the unit time
    (mean, microseconds) each side's count is multiplied by, and the microseconds that gives."""

    component: str
    base_count: float
    head_count: float
    base_unit_us: float
    head_unit_us: float

    @property
    def base_us(self) -> float:
        return self.base_count * self.base_unit_us

    @property
    def head_us(self) -> float:
        return self.head_count * self.head_unit_us


@dataclass(frozen=True)
class Forecast:
    """A cost comparison's forecast of time at one client (never a measurement: docs/forecast.md).

    ``base_us`` and ``head_us`` are each side's time per transaction; ``tps_pct`` the change of
    single-client TPS it implies (QPS moves alike: the statements per transaction are the workload's),
    ``delta_us`` the change of each transaction's latency, by which p95 moves too while the latency's
    spread stays. Every interval spans every combination of the units' lowest and highest batch means.
    """

    base_us: float
    head_us: float
    tps_pct: float
    tps_low_pct: float
    tps_high_pct: float
    delta_us: float
    delta_low_us: float
    delta_high_us: float
    terms: tuple[ForecastTerm, ...]
    holds: str  # where it holds: "1 client only: ..." or the client counts where it stops holding
    calibrated: str  # which calibration: the testbed and when it was measured
    outcome: Literal["regression", "improvement", "pass", "unknown"] = "unknown"
    bound_pct: float = 5.0  # the single-client TPS change that counts (the scenario's qps minimum effect)
    gating: bool = False  # a forecast decides the build only under the forecast-gate setting
    note: str = ""  # what the forecast leaves out for this comparison
    caveat: str = ""  # a known blind spot of this comparison, said on its line (QUERY_CACHE_CAVEAT)

    @property
    def latency_pct(self) -> float:
        return 100.0 * self.delta_us / self.base_us if self.base_us > 0 else 0.0
