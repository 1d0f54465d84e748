"""Writing the files users read (reports, verdicts, comments, charts, BMF): whole or not at all.

A file is written to a temporary file in the same folder, flushed to disk, then renamed over its name
(``os.replace``), so a full or read-only disk, a signal or a crash leaves the previous file or none,
never a 0-byte or cut one; the temporary file is removed when the write fails. Every command's
user-visible output goes through :func:`write_atomic` (``ci run``, ``report --out``, ``trend``,
``export``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from harness.errors import ReportError


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` whole, or leave ``path`` as it was; returns ``path``.

    Raises :class:`ReportError` naming the file and the cause (``No space left on device``)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        partial.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise ReportError(f"cannot write {path}: {exc.strerror or exc}; free space or choose another folder") from exc
    return path


def append_atomic(path: Path, text: str) -> Path:
    """``text`` after what ``path`` holds (a blank line between), written as :func:`write_atomic` does."""
    try:
        before = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot append to {path}: {exc}") from exc
    return write_atomic(path, before + ("\n" if before else "") + text)
