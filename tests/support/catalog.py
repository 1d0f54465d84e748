"""A throwaway PostgreSQL for shared stores (DuckLake catalogs): tests/integration/test_lake.py,
tests/workflows/test_fleet.py."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from support import REPO

#: The superuser password of the throwaway PostgreSQL (`catalog`); clients pass it as PGPASSWORD.
PASSWORD = "fleet-secret"


@dataclass(frozen=True)
class Catalog:
    """A running throwaway PostgreSQL: its folder and port."""

    root: Path
    port: int

    def tool(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, str(REPO / "tools" / "postgres.py"), *args, str(self.root)],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        return result.stdout

    def new_lake(self, name: str, data_path: Path) -> str:
        """A brand-new catalog database ``name``: the store setting of a lake on it (no password in it)."""
        subprocess.run(
            [sys.executable, str(REPO / "tools" / "postgres.py"), "createdb", str(self.root), name],
            check=True,
            capture_output=True,
            timeout=120,
        )
        return f"ducklake:postgres:dbname={name} host=127.0.0.1 port={self.port} user=postgres data_path={data_path}"


@contextlib.contextmanager
def throwaway_catalog() -> Iterator[Catalog]:
    """A PostgreSQL started by tools/postgres.py for as long as the block runs, then destroyed."""
    # not pytest's tmp_path: its 0700 folders are out of the postgres user's reach
    base = Path(tempfile.mkdtemp(prefix="dbperf-pg-"))
    base.chmod(0o755)
    secret = base / "password"
    secret.write_text(PASSWORD)
    started = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "postgres.py"),
            "start",
            str(base / "pg"),
            "--password-file",
            str(secret),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert started.returncode == 0, started.stderr
    port = int(started.stdout.split("port=")[1].split()[0])
    try:
        yield Catalog(base / "pg", port)
    finally:
        subprocess.run(
            [sys.executable, str(REPO / "tools" / "postgres.py"), "destroy", str(base / "pg")],
            capture_output=True,
            check=False,
            timeout=120,
        )
        shutil.rmtree(base, ignore_errors=True)
