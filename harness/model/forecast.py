"""The forecast's records: a runner's calibration (unit times) and a cost comparison's forecast of time.

A cost comparison counts work (instructions, fsyncs, page reads, writes, statements per transaction); the
calibration says what one unit of each costs in time on this runner, measured on it by ``dbperf
calibrate``; the forecast multiplies the two into each side's time per transaction at one client and the
change of single-client throughput and latency it implies (docs/forecast.md). A forecast is never a
measurement: reports label it so, and it decides nothing unless the ``forecast-gate`` setting is on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal

from harness.errors import HarnessError

CALIBRATION_FORMAT = 2
"""The version of a calibration file; raised when a field changes meaning or goes away (2: a server's CPU
per statement beside its CPU per instruction, from two scenarios; fdatasync at several write sizes)."""

#: Where a forecast holds when the sweep gives no limit of its own (harness.judge.cost_forecast.holds_for).
ONE_CLIENT = "1 client only: concurrency, lock waits and background work are outside the model"

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

#: A cost run's keys are fresh (a short window after a warm-up), so a query cache never hits in it.
QUERY_CACHE_CAVEAT = (
    "query cache on: the cost window's keys are fresh, so its hits are not seen, only its overhead (docs/forecast.md)"
)


class OldCalibrationError(HarnessError):
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
            raise ValueError(f"unit time {self.name}: needs 0 <= low <= value <= high, got {self}")


@dataclass(frozen=True)
class ScenarioWork:
    """What one calibration scenario's runs measured per transaction at one client: its cost run's
    instructions and statements, and its timing runs' server CPU and wall time (mean over the runs)."""

    scenario: str
    instr_per_txn: float
    statements_per_txn: float
    cpu_us: float
    wall_us: float


@dataclass(frozen=True)
class ServerUnits:
    """What one server build's work costs on this runner, from timing and cost runs of two CPU-bound
    scenarios of different weight at one client: server CPU time per statement (``cpu_statement``: the
    network system calls, parsing, the wake-up) and per instruction counted in statement dispatch, solved
    from the two, and the time each statement adds outside the server's CPU (``statement``: the client, the
    loopback: wall time minus server CPU, per statement). ``fallback`` says why the solve was not used
    (a negative unit): then the CPU per statement is 0 and the CPU per instruction is the first scenario's."""

    server: str
    build_id: str
    version: str
    instruction: UnitTime  # microseconds of server CPU per instruction
    cpu_statement: UnitTime  # microseconds of server CPU per statement
    statement: UnitTime  # microseconds per statement outside the server's CPU
    scenarios: tuple[ScenarioWork, ...]
    fallback: str = ""
    run_ids: tuple[str, ...] = ()


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

    @staticmethod
    def from_document(doc: Mapping[str, object]) -> Calibration:
        """A calibration read back from its JSON document (``ValueError`` on anything else)."""

        def unit(value: object) -> UnitTime:
            if not isinstance(value, dict):
                raise TypeError("a unit time is not an object")
            return UnitTime(
                str(value["name"]),
                float(value["value_us"]),
                float(value["low_us"]),
                float(value["high_us"]),
                int(value["samples"]),
                float(value.get("p5_us", 0.0)),
                float(value.get("p50_us", 0.0)),
                float(value.get("p95_us", 0.0)),
                str(value.get("how", "")),
            )

        def work(value: object) -> ScenarioWork:
            if not isinstance(value, dict):
                raise TypeError("a scenario's work is not an object")
            return ScenarioWork(
                str(value["scenario"]),
                float(value["instr_per_txn"]),
                float(value["statements_per_txn"]),
                float(value["cpu_us"]),
                float(value["wall_us"]),
            )

        def server(value: object) -> ServerUnits:
            if not isinstance(value, dict):
                raise TypeError("a server's units are not an object")
            return ServerUnits(
                str(value["server"]),
                str(value["build_id"]),
                str(value["version"]),
                unit(value["instruction"]),
                unit(value["cpu_statement"]),
                unit(value["statement"]),
                tuple(work(w) for w in value["scenarios"]),
                str(value.get("fallback", "")),
                tuple(str(r) for r in value.get("run_ids", ())),
            )

        io, servers = doc.get("io", ()), doc.get("servers", ())
        if not isinstance(io, list) or not isinstance(servers, list):
            raise TypeError("io and servers must be lists")
        found = doc.get("format", 0)
        if not isinstance(found, int) or found > CALIBRATION_FORMAT:
            raise ValueError(f"calibration format {found} is newer than this dbperf reads ({CALIBRATION_FORMAT})")
        if found < CALIBRATION_FORMAT:
            raise OldCalibrationError(found, tuple(str(s.get("server", "")) for s in servers if isinstance(s, dict)))
        return Calibration(
            testbed=str(doc["testbed"]),
            measured_at=str(doc["measured_at"]),
            data_dir=str(doc["data_dir"]),
            read_mode=str(doc["read_mode"]),
            load=str(doc.get("load", "")),
            io=tuple(unit(u) for u in io),
            servers=tuple(server(s) for s in servers),
            format=found,
        )


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
