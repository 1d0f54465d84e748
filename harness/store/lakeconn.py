"""DuckDB connections to a DuckLake, with its extensions loaded from their PyPI wheels (never downloaded).

The wheels ``duckdb-extension-ducklake`` and ``duckdb-extension-postgres`` (same version as
``duckdb``) ship one ``.duckdb_extension`` file each under ``<package>/extensions/v<version>/``.
DuckDB loads an extension file by path but takes its entry point from the *file name*: the postgres
extension's entry point is ``postgres_scanner_...``, so it is copied once, atomically, to
``postgres_scanner.duckdb_extension`` in dbperf's cache folder. ``autoinstall_known_extensions`` and
``autoload_known_extensions`` stay off: a missing extension is an error, never a download.

A data path in a bucket (``s3://``) also loads ``duckdb-extension-httpfs`` (the ``s3`` extra) and
makes an S3 secret from the usual environment: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_REGION`` (or ``AWS_DEFAULT_REGION``) and, for S3-compatible services, ``AWS_ENDPOINT_URL``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from harness.errors import StoreError
from harness.store.location import LakeLocation

VERSION = "v" + duckdb.__version__  # the extension wheels must match DuckDB exactly
#: Rows per table up to which an insert is kept in the catalog (no Parquet file): a whole save.
INLINING_ROW_LIMIT = 200


def _wheel_file(package: str, name: str) -> Path:
    spec = importlib.util.find_spec(package)
    pip_name = package.replace("_", "-")
    if spec is None or spec.origin is None:
        raise StoreError(
            f"the shared store needs the Python package {pip_name}: pip install {pip_name}=={duckdb.__version__}"
        )
    path = Path(spec.origin).parent / "extensions" / VERSION / f"{name}.duckdb_extension"
    if not path.is_file():
        raise StoreError(
            f"{pip_name} does not match duckdb {duckdb.__version__} ({path} is missing): "
            f"pip install {pip_name}=={duckdb.__version__}"
        )
    return path


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    folder = Path(base) / "dbperf" / "duckdb-extensions" / VERSION
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.gettempdir()) / f"dbperf-duckdb-extensions-{os.getuid()}" / VERSION
        folder.mkdir(parents=True, exist_ok=True)
    return folder


def _renamed(source: Path, name: str) -> Path:
    """``source`` copied to ``<cache>/<name>`` (once; atomically, so a racing process never loads half)."""
    target = _cache_dir() / name
    size = source.stat().st_size
    with contextlib.suppress(OSError):
        if target.stat().st_size == size and target.stat().st_mtime >= source.stat().st_mtime:
            return target
    partial = target.with_name(f".{name}.{os.getpid()}.tmp")
    try:
        shutil.copyfile(source, partial)
        partial.replace(target)
    except OSError as exc:
        raise StoreError(f"cannot copy the postgres extension to {target}: {exc}") from exc
    return target


def extension_files(*, remote_data: bool = False) -> list[Path]:
    """The extension files to LOAD, in order: ducklake, postgres_scanner (and httpfs for a bucket)."""
    files = [
        _wheel_file("duckdb_extension_ducklake", "ducklake"),
        _renamed(_wheel_file("duckdb_extension_postgres", "postgres"), "postgres_scanner.duckdb_extension"),
    ]
    if remote_data:
        files.append(_wheel_file("duckdb_extension_httpfs", "httpfs"))
    return files


def quote(text: str) -> str:
    """A SQL string literal's body."""
    return text.replace("'", "''")


def connect(location: LakeLocation, environ: Mapping[str, str] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the lake's extensions loaded (nothing attached yet)."""
    files = extension_files(remote_data=location.remote_data)
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute("SET enable_progress_bar = false")  # slow loads and commits would draw bars on stderr
        for path in files:
            con.execute(f"LOAD '{quote(str(path))}'")
        con.execute("SET TimeZone = 'UTC'")
        if location.remote_data:
            _s3_secret(con, location, os.environ if environ is None else environ)
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"cannot load the DuckLake extensions: {exc}") from exc
    return con


def _s3_secret(con: duckdb.DuckDBPyConnection, location: LakeLocation, env: Mapping[str, str]) -> None:
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        raise StoreError(
            f"the lake's data path {location.data_path} is a bucket: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
            "(and AWS_REGION, or AWS_ENDPOINT_URL for an S3-compatible service)"
        )
    options = [f"KEY_ID '{quote(key)}'", f"SECRET '{quote(secret)}'"]
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        options.append(f"REGION '{quote(region)}'")
    endpoint = env.get("AWS_ENDPOINT_URL")
    if endpoint:
        parts = urlsplit(endpoint)
        options += [f"ENDPOINT '{quote(parts.netloc or parts.path)}'", "URL_STYLE 'path'"]
        if parts.scheme == "http":
            options.append("USE_SSL false")
    con.execute(f"CREATE OR REPLACE SECRET dbperf_lake_s3 (TYPE s3, {', '.join(options)})")


def attach_sql(location: LakeLocation, alias: str) -> str:
    """``ATTACH 'ducklake:postgres:<conninfo>' AS alias (DATA_PATH ...)``."""
    options = [f"DATA_PATH '{quote(location.data_path)}'"] if location.data_path else []
    options.append(f"DATA_INLINING_ROW_LIMIT {INLINING_ROW_LIMIT}")
    return f"ATTACH 'ducklake:postgres:{quote(location.conninfo)}' AS {alias} ({', '.join(options)})"


def lock_attach_sql(location: LakeLocation, alias: str) -> str:
    """A plain (read-only) postgres ATTACH of the catalog database, used for advisory locks."""
    return f"ATTACH '{quote(location.conninfo)}' AS {alias} (TYPE postgres, READ_ONLY)"
