"""The `store` setting: a local file, or a DuckLake catalog URL kept as a string, never with a password."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config.settings import resolve_settings
from harness.errors import StoreError
from harness.store.location import LakeLocation, is_lake, parse_conninfo, parse_lake

URL = "ducklake:postgres:dbname=lake host=127.0.0.1 port=5432 user=dbperf data_path=/shared/lake"


def test_lake_setting_splits_catalog_and_data_path() -> None:
    where = parse_lake(URL, environ={})
    assert where == LakeLocation("dbname=lake host=127.0.0.1 port=5432 user=dbperf", "/shared/lake/")
    assert str(where) == URL + "/"
    assert parse_lake(str(where), environ={}) == where  # round trip
    assert not where.remote_data


def test_quoted_values_and_buckets() -> None:
    where = parse_lake(
        "ducklake:postgres: dbname='perf lake' host = db.internal data_path='s3://bucket/dbperf' ", environ={}
    )
    assert where.conninfo == "dbname='perf lake' host=db.internal"
    assert where.data_path == "s3://bucket/dbperf/"
    assert where.remote_data
    assert parse_conninfo(r"a='it\'s' b=c\ d") == [("a", "it's"), ("b", "c d")]


def test_data_path_may_be_left_out_once_the_lake_exists() -> None:
    assert parse_lake("ducklake:postgres:dbname=lake", environ={}).data_path is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (URL + " password=hunter2", "must not hold the catalog password"),
        ("ducklake:postgres:PASSWORD=x dbname=lake", "must not hold the catalog password"),
        ("ducklake:postgres:postgresql://u:pw@db/lake", "not a URI"),
        ("ducklake:postgres:host=db", "names no catalog database"),
        ("ducklake:postgres:dbname=a dbname=b", "repeats dbname"),
        ("ducklake:postgres:dbname=lake data_path=relative/dir", "must be absolute"),
        ("ducklake:postgres:dbname='lake", "unclosed quote"),
        ("ducklake:postgres:dbname lake", "keyword=value"),
        ("ducklake:sqlite:lake.db", "DuckLake on PostgreSQL"),
    ],
)
def test_bad_settings_say_what_to_do(text: str, needle: str) -> None:
    with pytest.raises(StoreError, match=needle) as info:
        parse_lake(text, environ={})
    assert "hunter2" not in str(info.value)


def test_password_file_must_be_private(tmp_path: Path) -> None:
    passfile = tmp_path / "pgpass"
    passfile.write_text("*:*:*:dbperf:secret\n")
    passfile.chmod(0o644)
    with pytest.raises(StoreError, match=r"readable by others \(mode 0644\).*chmod 600"):
        parse_lake(URL, environ={"PGPASSFILE": str(passfile)})
    with pytest.raises(StoreError, match="readable by others"):
        parse_lake(URL + f" passfile={passfile}", environ={})
    passfile.chmod(0o600)
    assert parse_lake(URL, environ={"PGPASSFILE": str(passfile)}).data_path == "/shared/lake/"
    with pytest.raises(StoreError, match="cannot be read"):
        parse_lake(URL, environ={"PGPASSFILE": str(tmp_path / "missing")})


def test_settings_keep_a_lake_as_a_string_and_a_file_as_a_path(tmp_path: Path) -> None:
    from_env = resolve_settings({}, environ={"DBPERF_STORE": URL}, root=tmp_path)
    assert from_env.store == URL
    assert is_lake(from_env.store)
    (tmp_path / "pyproject.toml").write_text(f'[tool.dbperf]\nstore = "{URL}"\n')
    assert resolve_settings({}, environ={}, root=tmp_path).store == URL
    local = resolve_settings({"store": "results/x.duckdb"}, environ={"DBPERF_STORE": URL}, root=tmp_path)
    assert local.store == tmp_path / "results" / "x.duckdb"  # the flag wins, and a file is project-relative
    with pytest.raises(StoreError, match="password"):
        resolve_settings({"store": URL + " password=x"}, environ={}, root=tmp_path)
