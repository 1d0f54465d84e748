"""go-tpc and go-ycsb logs in tests/data, imported as runs."""

from __future__ import annotations

from pathlib import Path

from harness.imports.runs import ImportedRun, import_go_tpc

DATA = Path(__file__).resolve().parents[1] / "data"

TPC = DATA / "go-tpc"

YCSB = DATA / "go-ycsb"


def tpc(name: str, threads: int = 8) -> ImportedRun:
    [run] = import_go_tpc([TPC / name], scenario="tpcc", server="tidb-like", threads=threads)
    return run
