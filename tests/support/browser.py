"""Headless chromium for the trend site's tests (tests/integration/test_trend_site*.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=180,
    )


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]
