"""Where each function of a stripped binary starts and how long it is, from its ``.eh_frame`` section.

A stripped server binary (Debian's ``mariadbd``) has no symbol table, so valgrind names most of its
functions by address (``0x0000000000de0b60``), and an address means nothing in another build. The
unwind tables survive stripping: every function that can be unwound has an FDE giving its start and
length. :func:`function_extents` reads them (ELF64, either byte order, without any tool), and
:class:`Extents` finds the function an address lies in, so a cost run can name an unnamed function
by its binary and size (docs/reports.md, "Functions without symbols"), a name the same code keeps in
another build at another address.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_DW_EH_PE_OMIT = 0xFF
_DW_EH_PE_PCREL = 0x10
_FORMATS = {0x00: "Q", 0x02: "H", 0x03: "I", 0x04: "Q", 0x0A: "h", 0x0B: "i", 0x0C: "q"}


@dataclass(frozen=True)
class Extents:
    """Function starts (sorted) and their lengths, in the binary's own virtual addresses."""

    starts: tuple[int, ...] = ()
    sizes: tuple[int, ...] = ()

    def find(self, address: int) -> tuple[int, int] | None:
        """(start, size) of the function holding ``address``, or None when no FDE covers it."""
        index = bisect.bisect_right(self.starts, address) - 1
        if index < 0 or address >= self.starts[index] + self.sizes[index]:
            return None
        return self.starts[index], self.sizes[index]


def _leb(data: bytes, pos: int, *, signed: bool = False) -> tuple[int, int]:
    """A LEB128 number at ``pos`` (unsigned or signed) and the position after it."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (value - (1 << shift) if signed and byte & 0x40 else value), pos


def _uleb(data: bytes, pos: int) -> tuple[int, int]:
    return _leb(data, pos)


def _sleb(data: bytes, pos: int) -> tuple[int, int]:
    return _leb(data, pos, signed=True)


def _encoded(data: bytes, pos: int, encoding: int, order: str) -> tuple[int, int]:
    """One pointer in a DW_EH_PE encoding (the value before its application, e.g. pc-relative)."""
    form = encoding & 0x0F
    if form == 0x01:
        return _uleb(data, pos)
    if form == 0x09:
        return _sleb(data, pos)
    code = _FORMATS.get(form)
    if code is None:
        raise ValueError(f"unsupported pointer encoding {encoding:#x}")
    (value,) = struct.unpack_from(order + code, data, pos)
    return value, pos + struct.calcsize(code)


def _cie_encoding(data: bytes, pos: int, end: int, order: str) -> int:
    """The FDE pointer encoding a CIE declares (its augmentation's ``R``), absolute pointers by default."""
    version = data[pos]
    pos += 1
    nul = data.index(b"\0", pos, end)
    augmentation = data[pos:nul].decode("ascii", errors="replace")
    pos = nul + 1
    if "eh" in augmentation:
        pos += 8
    _, pos = _uleb(data, pos)  # code alignment
    _, pos = _sleb(data, pos)  # data alignment
    pos = pos + 1 if version == 1 else _uleb(data, pos)[1]  # return address register
    if not augmentation.startswith("z"):
        return 0
    _, pos = _uleb(data, pos)  # augmentation data length
    for char in augmentation[1:]:
        if char == "R":
            return data[pos]
        if char == "P":
            personality = data[pos]
            _, pos = _encoded(data, pos + 1, personality, order)
        elif char == "L":
            pos += 1
    return 0


def _section(data: bytes, order: str, wanted: bytes) -> tuple[int, int, int] | None:
    """(address, file offset, size) of the named section of an ELF64 file."""
    (shoff,) = struct.unpack_from(order + "Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", data, 0x3A)
    if not shoff or shstrndx >= shnum:
        return None

    def header(index: int) -> tuple[int, int, int, int]:
        base = shoff + index * shentsize
        (name,) = struct.unpack_from(order + "I", data, base)
        addr, offset, size = struct.unpack_from(order + "QQQ", data, base + 0x10)
        return name, addr, offset, size

    _, _, names_at, names_size = header(shstrndx)
    names = data[names_at : names_at + names_size]
    for index in range(shnum):
        name, addr, offset, size = header(index)
        if names[name : names.find(b"\0", name)] == wanted:
            return addr, offset, size
    return None


def extents_of(data: bytes) -> Extents:
    """Every FDE's function (start, size) of an ELF64 image; empty when it is none or has no .eh_frame."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2:
        return Extents()
    order = "<" if data[5] == 1 else ">"
    try:
        found = _section(data, order, b".eh_frame")
    except (struct.error, IndexError):
        return Extents()
    if found is None:
        return Extents()
    addr, offset, size = found
    section = data[offset : offset + size]
    encodings: dict[int, int] = {}
    functions: dict[int, int] = {}
    pos = 0
    try:
        while pos + 4 <= len(section):
            (length,) = struct.unpack_from(order + "I", section, pos)
            if length == 0:
                break
            head = 4
            if length == 0xFFFFFFFF:
                (length,) = struct.unpack_from(order + "Q", section, pos + 4)
                head = 12
            body = pos + head
            end = body + length
            (cie_id,) = struct.unpack_from(order + "I", section, body)
            if cie_id == 0:
                encodings[pos] = _cie_encoding(section, body + 4, end, order)
            else:
                encoding = encodings.get(body - cie_id, 0)
                if encoding != _DW_EH_PE_OMIT:
                    field = body + 4
                    start, after = _encoded(section, field, encoding, order)
                    if encoding & 0x70 == _DW_EH_PE_PCREL:
                        start = (start + addr + field) & 0xFFFFFFFFFFFFFFFF
                    length_of, _ = _encoded(section, after, encoding & 0x0F, order)
                    if length_of > 0:
                        functions[start] = max(length_of, functions.get(start, 0))
            pos = end
    except (struct.error, IndexError, ValueError):
        pass  # a damaged or unusual table: what was read so far still names its functions
    starts = tuple(sorted(functions))
    return Extents(starts, tuple(functions[s] for s in starts))


@lru_cache(maxsize=16)
def _cached(path: str, mtime_ns: int, size: int) -> Extents:
    return extents_of(Path(path).read_bytes())


def function_extents(path: Path) -> Extents:
    """The functions of the binary at ``path`` (cached per file and modification time); empty when unreadable."""
    try:
        stat = path.stat()
    except OSError:
        return Extents()
    try:
        return _cached(str(path), stat.st_mtime_ns, stat.st_size)
    except OSError:
        return Extents()
