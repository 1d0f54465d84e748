"""Children of dbperf (servers, sysbench, cp, git, valgrind, perf) never see the store's or anyone's secrets."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.errors import StoreError
from harness.store.location import parse_lake
from harness.workspace import child_environment

HARNESS = Path(__file__).resolve().parents[2] / "harness"
SPAWNERS = {"Popen", "run", "check_output", "call", "check_call"}


def test_every_process_dbperf_starts_gets_the_cleaned_environment():
    """Fix the class: a new subprocess call without env= would inherit PGPASSWORD; this finds it."""
    bare = []
    for path in sorted(HARNESS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "subprocess"
                and node.func.attr in SPAWNERS
                and not any(k.arg == "env" for k in node.keywords)
            ):
                bare.append(f"{path.relative_to(HARNESS.parent)}:{node.lineno}")
    assert bare == [], f"subprocess calls without env=child_environment(): {bare}"
    for name in ("os.system", "os.popen", "os.exec", "os.spawn", "pty.spawn"):
        users = [str(p) for p in HARNESS.rglob("*.py") if f"{name}" in p.read_text()]
        assert users == [], f"{name} inherits the environment: {users}"


def test_secrets_are_left_out_and_the_rest_kept():
    env = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "TMPDIR": "/tmp/x",
        "PGPASSWORD": "s3cr3t",
        "PGPASSFILE": "/root/.pgpass",
        "DBPERF_STORE": "ducklake:postgres:dbname=x",
        "BENCHER_API_TOKEN": "t",
        "GITHUB_TOKEN": "t",
        "DBPERF_TEST_EXTERNAL_PASSWORD": "p",
        "AWS_SECRET_ACCESS_KEY": "k",
        "AWS_ACCESS_KEY_ID": "k",
        "LANG": "C.UTF-8",
    }
    assert child_environment(env) == {"PATH": "/usr/bin", "HOME": "/root", "TMPDIR": "/tmp/x", "LANG": "C.UTF-8"}


@pytest.mark.parametrize(
    "setting",
    [
        "ducklake:postgres:dbname='lake password=s3cr3t' host=127.0.0.1",
        "ducklake:postgres:dbname=lake host='h password = s3cr3t'",
        "ducklake:postgres:dbname=lake password=s3cr3t",
    ],
)
def test_a_password_anywhere_in_the_store_setting_is_refused_and_never_echoed(setting: str):
    with pytest.raises(StoreError) as info:
        parse_lake(setting, environ={})
    assert "must not hold the catalog password" in str(info.value)
    assert "s3cr3t" not in str(info.value)
