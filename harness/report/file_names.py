"""File names built from names a user or a pull request chose (scenarios, servers, labels such as
``mariadb-local(A/A)``): every report file named after one goes through :func:`file_name`.

A name may hold anything: ``/`` (which would make a folder, or fail), ``..``, a NUL byte, a leading ``-``
(an option to the next command that reads it), spaces, non-ASCII letters, or be longer than a file
system allows (255 bytes). :func:`file_name` keeps ASCII letters, digits and ``._+-``, turns every other
run of characters into one ``-``, trims leading and trailing ``-`` and ``.``, and cuts the result to
:data:`MAX_STEM` characters. A name that changed on the way gets the first 8 hex digits of its SHA-256
appended, so two names that clean to the same text (``a/b`` and ``a-b``) still name two files; a name
that was already safe keeps its plain form (``flamegraph-oltp_read_only-8t.svg``).
"""

from __future__ import annotations

import hashlib
import re

#: The longest cleaned name kept before its hash (the prefix and suffix a caller adds come on top).
MAX_STEM = 80
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_stem(name: str) -> str:
    """``name`` as one path component's worth of safe characters (see the module docstring), never empty."""
    clean = _UNSAFE.sub("-", name).strip("-.")
    if clean == name and 0 < len(clean) <= MAX_STEM:
        return clean
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{clean[:MAX_STEM].rstrip('-.') or 'name'}-{digest}"


def file_name(name: str, *, prefix: str = "", suffix: str = "") -> str:
    """``prefix + safe_stem(name) + suffix``: the caller's fixed parts (``capacity-``, ``-8t.svg``) around
    the part it does not control."""
    return f"{prefix}{safe_stem(name)}{suffix}"
