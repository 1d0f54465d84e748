"""The notes an imported run carries: what the tool's figures mean and how precise they are.

Each tool's histogram resolution is said beside its percentiles (from their measurement code:
go-tpc's ``pkg/measurement/measure.go``, ``sigFigs = 1``, ``defaultMinLatency = 1 * time.Millisecond``;
go-ycsb's ``pkg/measurement/histogram.go``, ``hdrhistogram.New(1, 24*60*60*1000*1000, 3)`` over
microseconds). docs/imports.md has the field-by-field comparison.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.imports.oplines import OpLine
from harness.imports.printed_operations import printed_percentiles
from harness.imports.ycsb_reference import property_mismatch

_RMW = "READ_MODIFY_WRITE"
#: How precise each tool's printed latencies are (their measurement code; docs/imports.md).
TPC_RESOLUTION = (
    "go-tpc's percentiles come from an HDR histogram with one significant figure and a 1 ms floor "
    "(a faster transaction is recorded as 1 ms; buckets are several % wide), printed to 0.1 ms; "
    "Sum(ms) is exact"
)
YCSB_RESOLUTION = (
    "go-ycsb's latencies come from an HDR histogram of whole microseconds with 3 significant figures (within 0.1 %)"
)


def ycsb_notes(
    printed: Sequence[OpLine], own: Sequence[OpLine], scenario: str, properties: Mapping[str, str]
) -> tuple[str, ...]:
    """What a reader of an imported go-ycsb run must know: nested counts, the printed percentiles and
    their resolution, and a workload that is not the scenario's it is stored under."""
    notes = []
    rmw = next((op.count for op in printed if op.name == _RMW), 0)
    if rmw:
        counts = {op.name: op.count for op in printed}
        kept = {op.name: op.count for op in own}
        inner = ", ".join(f"{n} {counts[n]:,} -> {kept.get(n, 0):,}" for n in ("READ", "UPDATE") if n in counts)
        notes.append(
            f"go-ycsb also counts the READ and UPDATE inside each of the {rmw:,} READ_MODIFY_WRITEs; "
            f"stored as operations of their own: {inner} (their latencies are go-ycsb's, over every call; "
            "the printed lines are in the options, printed.<OPERATION>)"
        )
    shown = printed_percentiles(printed)
    if shown:
        notes.append(f"percentiles as go-ycsb printed them: {shown}; {YCSB_RESOLUTION}")
    mismatch = property_mismatch(scenario, properties) if scenario else None
    if mismatch:
        notes.append(mismatch)
    return tuple(notes)
