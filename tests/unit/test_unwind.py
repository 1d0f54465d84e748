"""Function extents from .eh_frame, checked against readelf's FDE list of a real binary (tests/data/elf:
coreutils' ``true`` and ``readelf --debug-dump=frames`` of it), and the dump renaming they allow."""

from __future__ import annotations

import gzip
from pathlib import Path

from harness.measure.cost_dump import name_by_extent, parse_dump
from harness.servers.unwind import Extents, extents_of, function_extents

DATA = Path(__file__).parent.parent / "data"
DUMP = DATA / "callgrind" / "mariadb-10.11.19-local-insert-t1-systime.callgrind.gz"


def test_every_fde_of_a_real_binary_is_read_as_readelf_reads_it() -> None:
    expected = {}
    for line in (DATA / "elf" / "true.fde.txt").read_text().splitlines():
        start, end = (int(x, 16) for x in line.split())
        expected[start] = end - start
    extents = function_extents(DATA / "elf" / "true")
    assert dict(zip(extents.starts, extents.sizes, strict=True)) == expected
    start, size = next(iter(expected.items()))
    assert extents.find(start) == (start, size)
    assert extents.find(start + size - 1) == (start, size)
    assert extents.find(0) is None


def test_no_elf_and_a_missing_file_give_no_extents(tmp_path: Path) -> None:
    assert extents_of(b"not an elf file at all" * 4) == Extents()
    assert function_extents(tmp_path / "missing") == Extents()
    truncated = (DATA / "elf" / "true").read_bytes()[:2000]
    assert extents_of(truncated).starts == ()  # section headers cut off: nothing, and no exception


def test_addresses_are_named_by_their_binary_and_size_and_merge_by_extent() -> None:
    text = gzip.decompress(DUMP.read_bytes()).decode()
    before = parse_dump(text)
    addresses = [f.name for f in before.functions if f.name.startswith("0x")]
    assert len(addresses) > 50
    # a table that covers every address in mariadbd with functions of 64 bytes from a 64-byte boundary
    starts = sorted({int(a.split("'")[0], 16) // 64 * 64 for a in addresses})  # 'N: a recursion level
    fake = Extents(tuple(starts), tuple(64 for _ in starts))

    def extents_for(path: str) -> Extents:
        return fake if path == "/usr/sbin/mariadbd" else Extents()

    after = parse_dump(name_by_extent(text, extents_for))
    assert not [f.name for f in after.functions if f.name.startswith("0x")]
    assert "[mariadbd, 64 bytes]" in {f.name for f in after.functions}
    assert after.total_ir == before.total_ir
    assert sum(f.self_ir for f in after.functions) == sum(f.self_ir for f in before.functions)
    assert after.syscalls == before.syscalls


def test_names_stay_when_no_table_covers_them() -> None:
    text = gzip.decompress(DUMP.read_bytes()).decode()
    assert name_by_extent(text, lambda path: Extents()) == text
