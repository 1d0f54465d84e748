"""harness.measure.cost_dump against a hand-computed dump and real dumps of all three server families."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.errors import SysbenchError
from harness.measure.cost_dump import parse_dump, read_dump

DATA = Path(__file__).parents[1] / "data" / "callgrind"


def test_hand_computed_dump_self_and_inclusive():
    """main->foo has calls=0 (as after callgrind_control -z with foo on the stack): its 100 is call cost."""
    expected = json.loads((DATA / "handmade.expected.json").read_text())
    profile = parse_dump((DATA / "handmade.callgrind").read_text())
    assert profile.total_ir == expected["totals"]
    by = {f.name: f for f in profile.functions}
    assert {n: f.self_ir for n, f in by.items()} == expected["self"]
    assert {n: f.inclusive_ir for n, f in by.items()} == expected["inclusive"]
    assert profile.unnamed_ir == expected["unnamed_self"]
    assert sum(f.self_ir for f in profile.functions) == profile.total_ir
    assert profile.functions[0].name == "memcpy"  # ordered by self cost


@pytest.mark.parametrize(
    "name",
    [
        "mariadb-10.11.19-local-point_select-t1",
        "mariadb-10.11.19-local-update_index-t1-rv",
        "mariadb-11.8.9-container-point_select-t1",
        "mysql-9.7.4-container-point_select-t1",
    ],
)
def test_real_dumps(name: str, tmp_path: Path):
    expected = json.loads((DATA / f"{name}.expected.json").read_text())
    profile = read_dump(DATA / f"{name}.callgrind.gz")
    assert profile.total_ir == expected["totals"]
    assert sum(f.self_ir for f in profile.functions) == expected["self_sum"]
    assert profile.unnamed_ir == expected["unnamed_self"]
    top = [[f.name, f.self_ir] for f in profile.functions[:5]]
    assert top == expected["top5_self"]
    assert gzip.decompress(profile.dump).startswith(b"# callgrind format")
    plain = tmp_path / "cg.out"
    plain.write_bytes(gzip.decompress(profile.dump))
    assert read_dump(plain).total_ir == profile.total_ir


def test_a_cut_dump_is_an_error():
    text = (DATA / "handmade.callgrind").read_text().replace("totals: 167", "")
    with pytest.raises(SysbenchError, match="cut short"):
        parse_dump(text)
