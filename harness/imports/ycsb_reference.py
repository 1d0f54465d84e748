"""What dbperf's ycsb_a..ycsb_f run, in go-ycsb's property names, to compare an imported go-ycsb run with.

An imported go-ycsb phase is stored under the scenario the user names; when that is one of dbperf's
YCSB-like workloads and the properties go-ycsb printed (or its defaults, for those it did not print)
differ from the workload's definition, the run gets a note naming both (:func:`property_mismatch`).
go-ycsb's own workload files a, b, c, e and f set ``requestdistribution=uniform`` (since 2019-12),
e also ``maxscanlength=1``, where dbperf's use zipfian and scans of 1-100 records
(scenarios/README.md, "YCSB-like workloads"). The definitions below are the ones in
``scenarios/lua/ycsb_*.lua`` (``ycsb.define``) and ``ycsb_common.lua``'s ``max_scan_length``;
tests/unit/test_import_ycsb_properties.py checks that they agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: go-ycsb's defaults (pkg/prop/prop.go) for the properties compared, when a properties block omits one.
GO_YCSB_DEFAULTS: Final[Mapping[str, str]] = {
    "readproportion": "0.95",
    "updateproportion": "0.05",
    "insertproportion": "0",
    "scanproportion": "0",
    "readmodifywriteproportion": "0",
    "requestdistribution": "uniform",
    "maxscanlength": "1000",
}

_MIX = ("readproportion", "updateproportion", "insertproportion", "scanproportion", "readmodifywriteproportion")


def _workload(distribution: str, **mix: float) -> dict[str, str]:
    out = {name: f"{mix.get(name.removesuffix('proportion'), 0.0):g}" for name in _MIX}
    out["requestdistribution"] = distribution
    if mix.get("scan", 0.0) > 0:
        out["maxscanlength"] = "100"
    return out


#: dbperf's workloads in go-ycsb's terms (scan length only where the workload scans).
DBPERF_YCSB: Final[Mapping[str, Mapping[str, str]]] = {
    "ycsb_a": _workload("zipfian", read=0.5, update=0.5),
    "ycsb_b": _workload("zipfian", read=0.95, update=0.05),
    "ycsb_c": _workload("zipfian", read=1.0),
    "ycsb_d": _workload("latest", read=0.95, insert=0.05),
    "ycsb_e": _workload("zipfian", scan=0.95, insert=0.05),
    "ycsb_f": _workload("zipfian", read=0.5, readmodifywrite=0.5),
}


def _same(a: str, b: str) -> bool:
    try:
        return abs(float(a) - float(b)) < 1e-9
    except ValueError:
        return a.strip().lower() == b.strip().lower()


def property_mismatch(scenario: str, properties: Mapping[str, str]) -> str | None:
    """One line naming what go-ycsb ran and what ``scenario`` runs where they differ, or None.

    None as well when ``scenario`` is not one of dbperf's YCSB-like workloads (nothing to compare).
    """
    ours = DBPERF_YCSB.get(scenario)
    if ours is None:
        return None
    differ = []
    for key, value in ours.items():
        theirs = properties.get(key, GO_YCSB_DEFAULTS[key])
        if not _same(theirs, value):
            said = "" if key in properties else " (go-ycsb's default)"
            differ.append((key, f"{key}={theirs}{said}", f"{key}={value}"))
    if not differ:
        return None
    return (
        f"go-ycsb ran {', '.join(d[1] for d in differ)}; dbperf's {scenario} runs {', '.join(d[2] for d in differ)}: "
        f"stored under {scenario}, but not the same workload (compare with care; scenarios/README.md)"
    )
