"""Where the store lives: the ``store`` setting, read as a local DuckDB file or a DuckLake catalog.

Two forms, told apart by their prefix::

    results/dbperf.duckdb                                   a local file (the default; relative to the project)
    ducklake:postgres:dbname=dbperf host=db.example port=5432 user=runner data_path=/srv/dbperf-lake/

The lake form is DuckDB's own ``ducklake:postgres:`` prefix followed by a libpq connection string
(``keyword=value`` pairs, values with spaces in single quotes) for the PostgreSQL database that holds
the catalog, plus one keyword that is not libpq's: ``data_path``, the folder or bucket holding the
Parquet files (a shared folder such as ``/mnt/perf-lake/``, or ``s3://bucket/prefix/`` with the
``s3`` extra installed). Every runner must name the same data path; it may be left out once the
lake exists (DuckLake keeps the one it was created with).

The setting is printed in logs and job summaries, so it must never carry a password: libpq takes it
from ``PGPASSWORD`` or from a password file (``~/.pgpass``, or ``PGPASSFILE``/``passfile=``, mode 0600).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import StoreError

LAKE_PREFIX = "ducklake:postgres:"
EXAMPLE = f"{LAKE_PREFIX}dbname=dbperf host=127.0.0.1 port=5432 user=dbperf data_path=/srv/dbperf-lake/"
_KEYWORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*")
_REMOTE = re.compile(r"[a-z][a-z0-9+.-]*://")
_SECRET_KEYWORDS = ("password",)
#: libpq reads a ``dbname`` holding ``=`` as a whole connection string, so ``dbname='x password=y'``
#: carries a password too (and any value may, quoted): refused the same way, never echoed.
_NESTED_SECRET = re.compile(r"password\s*=", re.IGNORECASE)


@dataclass(frozen=True)
class LakeLocation:
    """A DuckLake whose catalog is a PostgreSQL database and whose Parquet files live under ``data_path``."""

    conninfo: str  # libpq keyword=value string, without data_path and never with a password
    data_path: str | None  # ends with "/"; None: the path the lake was created with

    def __str__(self) -> str:
        text = LAKE_PREFIX + self.conninfo
        return text if self.data_path is None else f"{text} data_path={_quote(self.data_path)}"

    @property
    def remote_data(self) -> bool:
        """True when the Parquet files live in a bucket (``s3://`` ...) rather than a folder."""
        return self.data_path is not None and _REMOTE.match(self.data_path) is not None


def is_lake(location: Path | str) -> bool:
    """True when the ``store`` setting names a DuckLake rather than a local file."""
    return isinstance(location, str) and location.strip().startswith("ducklake:")


def parse_lake(text: str, environ: Mapping[str, str] | None = None) -> LakeLocation:
    """The lake a ``ducklake:postgres:...`` setting names; a :class:`StoreError` says what is wrong."""
    env = os.environ if environ is None else environ
    text = text.strip()
    if not text.startswith(LAKE_PREFIX):
        raise StoreError(f"unsupported store {text!r}: a shared store is a DuckLake on PostgreSQL, e.g. {EXAMPLE!r}")
    body = text[len(LAKE_PREFIX) :].strip()
    if "://" in body.split(" ", 1)[0]:
        raise StoreError(f"write the catalog connection as libpq keyword=value pairs, not a URI: e.g. {EXAMPLE!r}")
    pairs = parse_conninfo(body)
    keys = [key for key, _ in pairs]
    if not pairs or "dbname" not in keys:
        raise StoreError(f"the store setting names no catalog database (dbname=...): e.g. {EXAMPLE!r}")
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise StoreError(f"the store setting repeats {', '.join(repeated)}: give each keyword once")
    secret = [k for k, v in pairs if k in _SECRET_KEYWORDS or _NESTED_SECRET.search(v)]
    if secret:
        raise StoreError(
            "the store setting must not hold the catalog password (it is shown in logs): remove password=... "
            "and set PGPASSWORD, or put it in a password file (~/.pgpass or PGPASSFILE, mode 0600)"
        )
    values = dict(pairs)
    passfile = values.get("passfile") or env.get("PGPASSFILE")
    if passfile:
        check_passfile(Path(passfile).expanduser())
    data_path = values.pop("data_path", None)
    if data_path is not None:
        data_path = _data_path(data_path)
    conninfo = " ".join(f"{k}={_quote(v)}" for k, v in values.items())
    return LakeLocation(conninfo=conninfo, data_path=data_path)


def check_passfile(path: Path) -> None:
    """A password file must exist and be readable by its owner only (libpq ignores it otherwise)."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise StoreError(f"the catalog password file {path} cannot be read ({exc.strerror}): create it") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise StoreError(
            f"the catalog password file {path} is readable by others (mode {stat.S_IMODE(mode):04o}), so libpq "
            f"ignores it: chmod 600 {path}"
        )


def _data_path(value: str) -> str:
    if not value:
        raise StoreError("data_path in the store setting is empty: name the lake's folder or bucket")
    if not _REMOTE.match(value) and not Path(value).is_absolute():
        raise StoreError(
            f"data_path={value!r} must be absolute (every runner must find the same folder) or a bucket "
            "URL such as s3://bucket/dbperf/"
        )
    return value if value.endswith("/") else value + "/"


def parse_conninfo(text: str) -> list[tuple[str, str]]:
    """``keyword=value`` pairs of a libpq connection string (values may be single-quoted, with \\ escapes)."""
    pairs: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _KEYWORD.match(text, pos)
        if match is None:
            raise StoreError(
                f"cannot read the store setting near {text[pos : pos + 20]!r}: "
                f"use keyword=value pairs, e.g. {EXAMPLE!r}"
            )
        pos = match.end()
        value, pos = _value(text, pos)
        pairs.append((match.group(1).lower(), value))
    return pairs


def _value(text: str, pos: int) -> tuple[str, int]:
    out: list[str] = []
    if pos < len(text) and text[pos] == "'":
        pos += 1
        while pos < len(text):
            char = text[pos]
            if char == "\\" and pos + 1 < len(text):
                out.append(text[pos + 1])
                pos += 2
                continue
            if char == "'":
                return "".join(out), pos + 1
            out.append(char)
            pos += 1
        raise StoreError("the store setting has an unclosed quote: close the value with '")
    while pos < len(text) and not text[pos].isspace():
        if text[pos] == "\\" and pos + 1 < len(text):
            pos += 1
        out.append(text[pos])
        pos += 1
    return "".join(out), pos


def _quote(value: str) -> str:
    if value and not any(c.isspace() or c in "'\\" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
