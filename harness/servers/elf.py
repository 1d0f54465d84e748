"""The GNU build-id of an ELF binary: the identity of a server build that instruction counts depend on.

Two machines with the same Debian package have the same build-id; a point release, a rebuild or a
different distribution's binary have another. Read from the ``NT_GNU_BUILD_ID`` note of the program
headers' ``PT_NOTE`` segments (ELF64 or ELF32, either byte order), without any tool.
"""

from __future__ import annotations

import struct
from pathlib import Path

_PT_NOTE = 4
_NT_GNU_BUILD_ID = 3


def build_id(data: bytes) -> str:
    """The build-id as hex, or "" when ``data`` is no ELF file or has no build-id note."""
    if len(data) < 64 or data[:4] != b"\x7fELF":
        return ""
    is64 = data[4] == 2
    order = "<" if data[5] == 1 else ">"
    if is64:
        (phoff,) = struct.unpack_from(order + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x36)
    else:
        (phoff,) = struct.unpack_from(order + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(order + "HH", data, 0x2A)
    for index in range(phnum):
        base = phoff + index * phentsize
        if base + phentsize > len(data):
            return ""
        (p_type,) = struct.unpack_from(order + "I", data, base)
        if p_type != _PT_NOTE:
            continue
        if is64:
            (offset,) = struct.unpack_from(order + "Q", data, base + 8)
            (size,) = struct.unpack_from(order + "Q", data, base + 32)
        else:
            (offset,) = struct.unpack_from(order + "I", data, base + 4)
            (size,) = struct.unpack_from(order + "I", data, base + 16)
        found = _in_notes(data[offset : offset + size], order)
        if found:
            return found
    return ""


def _in_notes(notes: bytes, order: str) -> str:
    pos = 0
    while pos + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from(order + "III", notes, pos)
        name_start = pos + 12
        desc_start = name_start + ((namesz + 3) & ~3)
        if kind == _NT_GNU_BUILD_ID and notes[name_start : name_start + namesz].rstrip(b"\0") == b"GNU":
            return notes[desc_start : desc_start + descsz].hex()
        pos = desc_start + ((descsz + 3) & ~3)
    return ""


def file_build_id(path: Path) -> str:
    """The build-id of a binary on disk ("" when unreadable); the notes sit in the first pages."""
    try:
        with path.open("rb") as handle:
            return build_id(handle.read(1 << 20))
    except OSError:
        return ""
