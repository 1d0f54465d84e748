"""A pydantic validation error as one phrase: where in the file, what is wrong, what was there.

Every reader that validates a file with pydantic (the verdict document, the calibration file, a
baseline file) says its first problem this one way, then adds its own source and what to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


def first_problem(exc: ValidationError, whole: str = "the file") -> str:
    """``verdicts[0].threads: input should be a valid integer, got '8' (and 2 more)``: the first error's
    place (``whole`` when it is the top level), its message, the value found unless it is an object or a
    list, and how many more errors there are."""
    first = exc.errors(include_url=False)[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".")
    said = first["msg"][:1].lower() + first["msg"][1:]
    got = "" if isinstance(first["input"], dict | list) else f", got {str(first['input'])[:40]!r}"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where or whole}: {said}{got}{more}"
