"""The ``dbperf`` CLI run as a subprocess, as a user runs it: one-shot (``Dbperf.run``) or live (``Streamed``)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from support import REPO


def dbperf_argv() -> list[str]:
    """The ``dbperf`` console script of the running interpreter's environment (else ``-m harness``)."""
    script = Path(sys.executable).with_name("dbperf")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "harness"]


@dataclass
class Streamed:
    """A running dbperf process whose stdout and stderr are read live (with arrival times)."""

    proc: subprocess.Popen[str]
    stdout: list[str] = field(default_factory=list)
    stderr: list[tuple[float, str]] = field(default_factory=list)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start_readers(self) -> None:
        def pump(stream: object, sink: Callable[[str], None]) -> None:
            for line in stream:  # type: ignore[attr-defined]
                sink(line.rstrip("\n"))

        assert self.proc.stdout is not None and self.proc.stderr is not None
        for stream, sink in (
            (self.proc.stdout, self.stdout.append),
            (self.proc.stderr, lambda line: self.stderr.append((time.monotonic(), line))),
        ):
            thread = threading.Thread(target=pump, args=(stream, sink), daemon=True)
            thread.start()
            self._threads.append(thread)

    def wait_for_stderr(self, predicate: Callable[[str], bool], timeout_s: float) -> str:
        """The first stderr line matching ``predicate``; fails if the process ends or time runs out."""
        deadline = time.monotonic() + timeout_s
        seen = 0
        while time.monotonic() < deadline:
            lines = [line for _, line in self.stderr]
            for line in lines[seen:]:
                if predicate(line):
                    return line
            seen = len(lines)
            if self.proc.poll() is not None:
                for thread in self._threads:  # the readers end at end of file: every line is in
                    thread.join(timeout=10)
                if len(self.stderr) == seen:
                    break
                continue
            time.sleep(0.05)
        self.kill()
        pytest.fail(
            f"no matching stderr line within {timeout_s:.0f} s (exit {self.proc.returncode}); stderr:\n"
            + self.stderr_text()
        )

    def wait(self, timeout_s: float) -> int:
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"dbperf did not finish within {timeout_s:.0f} s; stderr:\n{self.stderr_text()}")
        self.close()
        return code

    def close(self) -> None:
        for thread in self._threads:
            thread.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.close()

    def end(self) -> None:
        """Stop a process a test left running: SIGTERM (dbperf stops its servers), SIGKILL after 60 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a test may have stopped it
            self.proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=60)
        self.kill()

    def stdout_text(self) -> str:
        return "\n".join(self.stdout)

    def stderr_text(self) -> str:
        return "\n".join(line for _, line in self.stderr)


#: dbperf processes started by the running test (``Dbperf.start``); :func:`end_started` ends them.
STARTED: list[Streamed] = []


@dataclass
class Dbperf:
    """Runs the ``dbperf`` CLI as a subprocess from the repository root."""

    env: dict[str, str]

    def run(
        self, *args: str | Path, timeout_s: float = 600, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*dbperf_argv(), *map(str, args)],
            cwd=REPO,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )

    def start(self, *args: str | Path, env: Mapping[str, str] | None = None) -> Streamed:
        proc = subprocess.Popen(
            [*dbperf_argv(), *map(str, args)],
            cwd=REPO,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        streamed = Streamed(proc)
        streamed.start_readers()
        STARTED.append(streamed)
        return streamed

    def runs(self, store: Path, *extra: str) -> list[dict[str, object]]:
        """``dbperf runs --json`` of a store."""
        out = self.run("runs", "--json", "--limit", "0", "--store", store, *extra, timeout_s=120)
        assert out.returncode == 0, out.stderr
        docs = json.loads(out.stdout)
        assert isinstance(docs, list)
        return docs


def run_pytest(
    args: Sequence[str | Path], env: Mapping[str, str], timeout_s: float = 900
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest ARGS`` from the repository root (used for ``pytest scenarios/``)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *map(str, args)],
        cwd=REPO,
        env={**env, "DBPERF_PROGRESS": "0"},
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def end_started() -> None:
    """Kill and wait for the dbperf processes the running test started, and close their pipes."""
    while STARTED:
        STARTED.pop().end()


def one_line_error(stderr: str) -> str:
    """The whole of stderr must be one line, without a traceback; returns it."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{stderr}"
    return lines[0]
