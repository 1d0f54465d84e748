"""JSON from users' files read with bounds checked before parsing: nesting depth, size, digits.

Python's ``json`` recurses once per nested array or object and converts every integer with ``int()``,
so a document nested 100,000 deep stops it with a RecursionError and a 5,000-digit number with a
ValueError (Python's 4,300-digit conversion limit), neither of which callers expect. :func:`loads`
refuses both, and documents over a size limit, with a :class:`JSONLimitError`: a
``json.JSONDecodeError``, so every caller's existing "not valid JSON" message covers it, with the
position of the offending character. Every JSON file dbperf reads from a user (baselines,
``verdicts.json`` in the trusted builders, unsaved-run files, ``--json`` documents) goes through it.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Deeper than any document dbperf writes (a run's rows: about 5 levels).
MAX_DEPTH = 64
#: More digits in a row than any number dbperf writes (a 64-bit integer has 20, a float 17).
MAX_DIGITS = 40
#: Larger than any document dbperf writes (an unsaved run with its intervals: a few MB).
MAX_CHARS = 256 * 1024 * 1024

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_DIGITS = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


class JSONLimitError(json.JSONDecodeError):
    """A document refused before parsing: too deep, too large, or a number with too many digits."""


def check_bounds(text: str, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS) -> None:
    """Refuse ``text`` when it is longer than ``max_chars`` or nests deeper than ``max_depth``."""
    if len(text) > max_chars:
        raise JSONLimitError(f"larger than {max_chars:,} characters", text[:0], 0)
    bare = _STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)  # same offsets
    depth = 0
    for match in _BRACKET.finditer(bare):
        depth += 1 if match.group() in "[{" else -1
        if depth > max_depth:
            raise JSONLimitError(f"nested deeper than {max_depth} levels", text, match.start())
    long = _DIGITS.search(bare)
    if long is not None:
        digits = len(long.group())
        raise JSONLimitError(f"a number of {digits:,} digits (at most {MAX_DIGITS})", text, long.start())


def loads(text: str, **kwargs: Any) -> Any:
    """``json.loads`` after :func:`check_bounds`; the same keyword arguments (``object_hook`` ...)."""
    check_bounds(text)
    return json.loads(text, **kwargs)
