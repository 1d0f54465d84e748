"""No label, scenario or server name can break a file path (issue 34 item 9): every report file named after
one goes through harness.report.file_names, which keeps a safe name as it is and makes any other safe and
distinct. The crash it fixes: ``dbperf compare --base mariadb-local --head mariadb-local --out DIR`` labels
the head ``mariadb-local(A/A)``, and the release report wrote its capacity chart under that "/"."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support.capacity import capacity_of, sweep_cases
from support.flames import handmade

from harness.judge.gate import judge_pairs
from harness.model import Outcome
from harness.report.file_names import MAX_STEM, file_name, safe_stem
from harness.report.flame_svg import file_name as flame_file_name
from harness.report.release import write_release
from harness.report.site import slug
from harness.report.trusted_comment import FLAME_GRAPH

HOSTILE = [
    "a/b",
    "a-b",
    "..",
    ".",
    "",
    "x\0y",
    "x" * 300,
    "x" * 299 + "y",
    "sélect-ünïcode",
    "-rf",
    "--help",
    "mariadb-local(A/A)",
    "a b\nc",
    "../../etc/passwd",
    "CON",
    "\udcff",  # a lone surrogate, as a non-UTF-8 file name decodes
]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_becomes_one_safe_component(name: str, tmp_path: Path) -> None:
    stem = safe_stem(name)
    assert stem and len(stem) <= MAX_STEM + 9
    assert stem[0] not in "-." and stem not in (".", "..")
    assert all(c.isascii() and (c.isalnum() or c in "._+-") for c in stem)
    path = tmp_path / file_name(name, prefix="capacity-", suffix=".png")
    path.write_bytes(b"x")  # one file, right in the folder
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_distinct_names_get_distinct_files_and_safe_ones_keep_their_form() -> None:
    stems = [safe_stem(n) for n in HOSTILE]
    assert len(set(stems)) == len(stems)
    assert safe_stem("oltp_read_only") == "oltp_read_only"
    assert safe_stem("mariadb-10.11") == "mariadb-10.11"
    assert safe_stem("a/b") != safe_stem("a-b") == "a-b"
    assert slug("a/b") == safe_stem("a/b")  # the trend site's PNGs too


def test_a_flame_graph_of_a_hostile_scenario_still_passes_the_trusted_jobs_check() -> None:
    assert flame_file_name(handmade()) == "flamegraph-oltp_point_select-1t.svg"  # the plain form, unchanged
    for name in HOSTILE:
        graph = dataclasses.replace(handmade(), scenario=name)
        assert FLAME_GRAPH.fullmatch(flame_file_name(graph)), name


def test_an_a_a_comparison_writes_its_release_report(tmp_path: Path) -> None:
    """The crash of the issue: the capacity chart of a head labelled ``mariadb-local(A/A)``."""
    verdicts = judge_pairs(sweep_cases(4, head_p95_at_top=30.0, seed=4))
    _, sweep = capacity_of(verdicts)
    sweep = dataclasses.replace(sweep, base="mariadb-local", head="mariadb-local(A/A)")
    out = tmp_path / "release"
    report = write_release(out, Outcome(runs=(), verdicts=(sweep,), pairs=4), seconds=60.0)
    pngs = [p.name for p in out.iterdir() if p.name.startswith("capacity-")]
    assert len(pngs) == 1 and "/" not in pngs[0] and (out / pngs[0]).stat().st_size > 5000
    assert f"]({pngs[0]})" in report.read_text()
