"""ycsb_a..ycsb_f against YCSB's definitions (CoreWorkload, ScrambledZipfianGenerator, SkewedLatestGenerator,
AcknowledgedCounterGenerator), read from what the server received, at 1 and at 8 threads (issue 37, item 5).

A throwaway MariaDB writes its general log during a short run of each workload; every statement is mapped
back to its record number (keys are ``"user" + fnvhash64(n)``) and the test checks:

- the mix: each operation type's share of the workload's counts (chi-square against the proportions);
- no read found no row (the per-operation ``misses``), and no read asked for a record whose INSERT the
  server had not received yet (ycsb_d at 8 threads read 26 % of such records before the fix);
- zipfian workloads: the share of the draws that hit the 10 most popular records of YCSB's scrambled
  zipfian (computed here in Python from its definition: 10^10 ranks, constant 0.99, FNV-hashed modulo
  the record count) against its expectation (binomial), and the slope of the rank-frequency line of
  the 50 most popular records against the same slope of the expected frequencies;
- ycsb_d (latest): the share of reads within 10 records of the newest acknowledged one, and the slope.

``measure`` is what docs/ycsb-fidelity.md's table was measured with.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pymysql
import pytest
from scipy.stats import binomtest, chisquare
from support import SCENARIOS
from support.integration import throwaway_mariadb

from harness.model.endpoint import Endpoint
from harness.sysbench.ops_protocol import parse_operations

pytestmark = pytest.mark.integration

RECORDS = 10_000  # the quick profile's table_size
SPARE = 100_000  # record numbers above RECORDS an insert may take during the runs
MIX: dict[str, dict[str, float]] = {
    "ycsb_a": {"READ": 0.5, "UPDATE": 0.5},
    "ycsb_b": {"READ": 0.95, "UPDATE": 0.05},
    "ycsb_c": {"READ": 1.0},
    "ycsb_d": {"READ": 0.95, "INSERT": 0.05},
    "ycsb_e": {"SCAN": 0.95, "INSERT": 0.05},
    "ycsb_f": {"READ": 0.5, "READ_MODIFY_WRITE": 0.5},
}
THETA = 0.99
YCSB_ITEMS = 10_000_000_000
YCSB_ZETAN = 26.46902820178302
FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(1099511628211)
TOP = 10
SLOPE_RANKS = 50

_EXECUTE = re.compile(r"^(?:\d{6}\s+[\d:]+)?\s+(\d+)\s+(?:Execute|Query)\s(.*)$")
_READ = re.compile(r"^SELECT \* FROM usertable WHERE YCSB_KEY = '(user\d+)'")
_SCAN = re.compile(r"^SELECT \* FROM usertable WHERE YCSB_KEY >= '(user\d+)'")
_UPDATE = re.compile(r"^UPDATE usertable SET FIELD\d = '.*' WHERE YCSB_KEY = '(user\d+)'$")
_INSERT = re.compile(r"^INSERT INTO usertable VALUES \('(user\d+)'")


def fnvhash64(values: np.ndarray) -> np.ndarray:
    """YCSB's Utils.fnvhash64 (FNV-1a over 8 bytes, then Math.abs of the signed result), vectorised."""
    v = values.astype(np.uint64)
    h = np.full(v.shape, FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for _ in range(8):
            h = (h ^ (v & np.uint64(0xFF))) * FNV_PRIME
            v = v >> np.uint64(8)
        negative = h >= np.uint64(1 << 63)
        h[negative] = np.uint64(0) - h[negative]
    return h


def gray_pmf(n: int, zetan: float, ranks: np.ndarray) -> np.ndarray:
    """P(rank) of YCSB's ZipfianGenerator over n items (the u-interval of each rank)."""
    eta = (1 - (2.0 / n) ** (1 - THETA)) / (1 - (1 + 0.5**THETA) / zetan)
    low = (1 + 0.5**THETA) / zetan

    def u_at(x: np.ndarray) -> np.ndarray:
        return np.clip(((x / n) ** (1 - THETA) - 1) / eta + 1, low, 1.0)

    x = ranks.astype(np.float64)
    pmf = u_at(x + 1) - u_at(x)
    pmf[ranks == 0] = 1 / zetan
    pmf[ranks == 1] = 0.5**THETA / zetan
    return pmf


def scrambled_pmf(items: int, ranks_exact: int = 2_000_000) -> np.ndarray:
    """P(record) of YCSB's ScrambledZipfianGenerator over ``items`` records."""
    ranks = np.arange(ranks_exact, dtype=np.int64)
    p = gray_pmf(YCSB_ITEMS, YCSB_ZETAN, ranks)
    pmf = np.bincount((fnvhash64(ranks) % np.uint64(items)).astype(np.int64), weights=p, minlength=items)
    return pmf + (1.0 - p.sum()) / items


def latest_pmf(items: int, ranks: int) -> np.ndarray:
    """P(newest - k) of YCSB's SkewedLatestGenerator over ``items`` records, k < ``ranks``."""
    zetan = float(np.sum(1.0 / np.arange(1, items + 1, dtype=np.float64) ** THETA))
    return gray_pmf(items, zetan, np.arange(ranks))


def slope(counts: np.ndarray) -> float:
    """The slope of log(frequency) over log(rank), ranks 1..len(counts)."""
    ranks = np.arange(1, len(counts) + 1, dtype=np.float64)
    return float(np.polyfit(np.log(ranks), np.log(counts + 0.5), 1)[0])


@dataclass
class Seen:
    """One run: what the workload counted, and the record numbers the server was asked for, in order."""

    ops: Counter[str] = field(default_factory=Counter)
    misses: int = 0
    draws: list[int] = field(default_factory=list)  # reads, updates and scan starts (an RMW's read only)
    offsets: list[int] = field(default_factory=list)  # latest: newest acknowledged record minus the read
    unborn: int = 0  # reads of records the server had not been asked to insert yet

    def top_share(self, top: np.ndarray) -> float:
        return float(np.isin(np.array(self.draws), top).mean()) if self.draws else 0.0


class Keys:
    """Record numbers by key."""

    def __init__(self) -> None:
        numbers = np.arange(RECORDS + SPARE, dtype=np.int64)
        self.number = {f"user{h}": int(n) for n, h in zip(numbers, fnvhash64(numbers).tolist(), strict=True)}


def parse_log(text: str, keys: Keys, rmw: bool, start: int) -> Seen:
    """The statements of one run; an RMW's UPDATE repeats its READ's draw and is skipped. Records below
    ``start`` (ycsb_meta's next record number when the run began) exist already."""
    seen = Seen()
    inserted: set[int] = set()
    prefix = start  # the first record number not yet inserted (every one below it has been)
    for line in text.splitlines():
        m = _EXECUTE.match(line)
        if m is None:
            continue
        sql = m[2]
        if (i := _INSERT.match(sql)) is not None:
            inserted.add(keys.number[i[1]])
            while prefix in inserted:
                prefix += 1
            continue
        hit = _READ.match(sql) or _SCAN.match(sql) or (None if rmw else _UPDATE.match(sql))
        if hit is None:
            continue
        n = keys.number[hit[1]]
        seen.draws.append(n)
        if n >= start and n not in inserted:
            seen.unborn += 1
        seen.offsets.append(prefix - 1 - n)
    return seen


def _conn(endpoint: Endpoint) -> pymysql.connections.Connection:
    return pymysql.connect(
        host=endpoint.host, port=endpoint.port, user=endpoint.user, password=endpoint.password,
        database=endpoint.database, autocommit=True,
    )  # fmt: skip


def sysbench(script_dir: Path, endpoint: Endpoint, script: str, command: str, *args: str) -> str:
    argv = ["sysbench", f"{script}.lua", *endpoint.sysbench_args(), f"--table-size={RECORDS}", *args, command]
    done = subprocess.run(argv, cwd=script_dir, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout


def measure(script_dir: Path, endpoint: Endpoint, log: Path, workload: str, threads: int, seconds: int) -> Seen:
    """One run of ``workload`` with the server's general log on; what it counted and what it sent."""
    conn = _conn(endpoint)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT value FROM ycsb_meta WHERE name = 'next_insert'")
            start = int(cur.fetchone()[0])
            cur.execute(f"SET GLOBAL general_log_file = '{log}'")
            cur.execute("SET GLOBAL general_log = ON")
        out = sysbench(script_dir, endpoint, workload, "run", f"--threads={threads}", f"--time={seconds}")
        with conn.cursor() as cur:
            cur.execute("SET GLOBAL general_log = OFF")
    finally:
        conn.close()
    seen = parse_log(log.read_text(errors="replace"), KEYS, rmw="READ_MODIFY_WRITE" in MIX[workload], start=start)
    for op in parse_operations(out.splitlines(), float(seconds)):
        seen.ops[op.type] += op.count
        seen.misses += op.misses
    return seen


KEYS = Keys()
ZIPF = scrambled_pmf(RECORDS)
ZIPF_ORDER = np.argsort(-ZIPF)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Endpoint]]:
    root = tmp_path_factory.mktemp("ycsb-fidelity")
    script_dir = root / "lua"
    script_dir.mkdir()
    for path in (SCENARIOS / "lua").glob("ycsb*.lua"):
        shutil.copy(path, script_dir / path.name)
    shutil.copy(SCENARIOS / "lua" / "dbperf_ops.lua", script_dir / "dbperf_ops.lua")
    options = ("--innodb-flush-log-at-trx-commit=2", "--log-output=FILE")
    with throwaway_mariadb(root / "d", *options) as endpoint:
        sysbench(script_dir, endpoint, "ycsb_a", "prepare")
        yield script_dir, endpoint


def _check_mix(workload: str, seen: Seen) -> None:
    total = sum(seen.ops.values())
    assert total >= 300, f"{workload}: only {total} operations"
    mix = MIX[workload]
    if len(mix) > 1:
        fit = chisquare([seen.ops[t] for t in mix], [p * total for p in mix.values()])
        assert fit.pvalue > 1e-6, f"{workload}: mix {dict(seen.ops)} is not {mix} (p={fit.pvalue:.2g})"
    assert set(seen.ops) == set(mix), f"{workload}: {dict(seen.ops)}"


@pytest.mark.parametrize("threads", [1, 8])
@pytest.mark.parametrize("workload", sorted(MIX))
def test_workload_matches_ycsb(prepared, tmp_path, workload, threads):
    script_dir, endpoint = prepared
    seen = measure(script_dir, endpoint, tmp_path / "general.log", workload, threads, seconds=3)
    _check_mix(workload, seen)
    assert seen.misses == 0, f"{workload}: {seen.misses} reads found no row"
    assert seen.unborn == 0, f"{workload}: {seen.unborn} reads of records not inserted yet"
    assert len(seen.draws) >= 300, f"{workload}: only {len(seen.draws)} key draws"
    if workload == "ycsb_d":
        offsets = np.array(seen.offsets)
        assert offsets.min() >= 0  # never past the newest acknowledged record (the log's order)
        expected = latest_pmf(RECORDS, SLOPE_RANKS)
        near = int((offsets < TOP).sum())
        # at 8 threads the newest record a thread knows lags the log's by up to a few inserts
        if threads == 1:
            fit = binomtest(near, len(offsets), float(expected[:TOP].sum()))
            assert fit.pvalue > 1e-6, f"latest: {near / len(offsets):.3f} within {TOP}, want {expected[:TOP].sum():.3f}"
        else:
            assert abs(near / len(offsets) - expected[:TOP].sum()) < 0.12
        counts = np.bincount(offsets[offsets < SLOPE_RANKS], minlength=SLOPE_RANKS).astype(np.float64)
        assert abs(slope(counts) - slope(expected * len(offsets))) < 0.35
        return
    top = ZIPF_ORDER[:TOP]
    share, want = seen.top_share(top), float(ZIPF[top].sum())
    hits = round(share * len(seen.draws))
    fit = binomtest(hits, len(seen.draws), want)
    assert fit.pvalue > 1e-6, f"{workload}: top-{TOP} share {share:.4f}, YCSB's {want:.4f} (p={fit.pvalue:.2g})"
    observed = np.array([Counter(seen.draws)[int(n)] for n in ZIPF_ORDER[:SLOPE_RANKS]], dtype=np.float64)
    expected_slope = slope(ZIPF[ZIPF_ORDER[:SLOPE_RANKS]] * len(seen.draws))
    assert abs(slope(observed) - expected_slope) < 0.35, (
        f"{workload}: slope {slope(observed):.2f}, {expected_slope:.2f}"
    )
