"""Local provider: ``mariadbd``/``mysqld`` from the binaries on PATH, the embedded default (no Docker).

Each server runs in its own temporary run folder (generated my.cnf, socket, pid and error log) on a
free loopback port, pinned with ``taskset`` to the server's CPU set. Leaving :meth:`serve` stops the
server (SIGTERM, then SIGKILL after a grace period) and removes the run folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from harness import workspace
from harness.errors import ServerError
from harness.model import Server
from harness.model.endpoint import Endpoint
from harness.servers.callgrind import Control, server_environment, valgrind_version
from harness.servers.elf import file_build_id
from harness.servers.provider import (
    DatasetCredentials,
    Launch,
    bootstrap,
    init_args,
    user_args,
)
from harness.servers.variables import write_cnf
from harness.workspace import child_environment

RUN_PREFIX = "dbperf-local-"
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/usr/bin")


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find_binary(name: str) -> str:
    found = shutil.which(name) or next((str(Path(d) / name) for d in _SBIN if (Path(d) / name).is_file()), None)
    if found is None:
        raise ServerError(
            f"'{name}' not found on PATH or in /usr/sbin; install the server "
            "(apt-get install mariadb-server) "
            "or set 'binary' in the server file"
        )
    return found


def _tail(path: Path, lines: int = 6, *, errors_only: bool = False) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return summarise_log(text, lines, errors_only=errors_only)


def summarise_log(text: list[str], lines: int = 6, *, errors_only: bool = False) -> str:
    """The last error lines of a server log (or its last lines when there are none), joined.

    ``errors_only``: say that the log holds no error rather than quote its last notes (a server
    killed from outside logs nothing about it, and its notes would only mislead).
    """
    errors = [ln for ln in text if "[ERROR]" in ln or "[Error]" in ln]
    if errors_only and not errors:
        return "no error in its log"
    return " | ".join((errors or text)[-lines:]) or "(empty log)"


def private_tmpdir(run_dir: Path) -> Path:
    """A server's own tmpdir, in its run folder.

    A starting mariadbd or mysqld deletes every ``#sql*`` file in its tmpdir (``mysql_rm_tmp_tables``):
    with the shared ``$TMPDIR``, one server starting (or ``mariadb-install-db``'s bootstrap) removed the
    temporary tables another was using, and that one failed ("Unknown table 'mysql.tmp_user_sys'").
    """
    folder = run_dir / "tmp"
    folder.mkdir(exist_ok=True)
    return folder


def init_failure(output: str) -> str:
    """What a failed datadir initialisation said: its error lines, not its last ones.

    mariadb-install-db ends every failure with the same paragraphs of advice; the bootstrap server's own
    errors ("ERROR: 1051 Unknown table ...", "[ERROR] ...") come before them.
    """
    lines = output.strip().splitlines()
    errors = [ln.strip() for ln in lines if "[ERROR]" in ln or ln.lstrip().startswith("ERROR")]
    return " | ".join((errors or lines)[-5:]) or "(no output)"


def exit_description(code: int | None) -> str:
    if code is None:
        return ""
    if code < 0:
        return f"server process killed by signal {-code}; "
    return f"server process exited with status {code}; "


@dataclass(frozen=True)
class LocalInstance:
    """A running local server process."""

    endpoint: Endpoint
    process: subprocess.Popen[bytes]
    version: str
    log_path: Path
    control: Control | None = None

    @property
    def host_pid(self) -> int | None:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def error_log_tail(self) -> str:
        return exit_description(self.process.poll()) + _tail(self.log_path, 3, errors_only=True)

    def save_log(self, destination: Path) -> bool:
        """Copy the server's error log (its run folder is removed when the server stops)."""
        try:
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.log_path, destination)
        except OSError:
            return False
        return True


def stop_process(process: subprocess.Popen[bytes], grace_s: float = 60.0) -> None:
    """SIGTERM (a clean InnoDB shutdown), then SIGKILL if it does not exit in time."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def sweep_leftovers() -> list[str]:
    """Stop servers and remove run folders left by dbperf processes that no longer exist.

    This is the layout of earlier versions (``$TMPDIR/dbperf-local-*`` with an ``owner.pid`` file);
    run folders now live in the process's workspace (:func:`harness.workspace.sweep`).
    """
    swept = []
    for run_dir in Path(tempfile.gettempdir()).glob(RUN_PREFIX + "*"):
        owner_file = run_dir / "owner.pid"
        try:
            owner = int(owner_file.read_text())
        except (OSError, ValueError):
            continue
        if Path(f"/proc/{owner}").exists():
            continue
        pid_file = run_dir / "server.pid"
        with suppress(OSError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        shutil.rmtree(run_dir, ignore_errors=True)
        swept.append(str(run_dir))
    return swept


def _run_group(argv: list[str], what: str) -> tuple[int, str]:
    """Run a command in its own process group, tracked, and kill the whole group if we are interrupted.

    ``mariadb-install-db`` is a script that starts a bootstrap server: killing the script alone would
    leave that server writing into a folder being removed.
    """
    space = workspace.current()
    with subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=child_environment(),
    ) as proc:
        space.track(proc.pid, what)
        try:
            out, _ = proc.communicate()
        except BaseException:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            space.untrack(proc.pid)
    return proc.returncode, out.decode(errors="replace")


class LocalProvider:
    """Starts servers from local binaries."""

    def __init__(self, server: Server) -> None:
        self.server = server
        default = "mariadbd" if server.flavour == "mariadb" else "mysqld"
        self._binary = server.binary or default

    @property
    def binary(self) -> str:
        return find_binary(self._binary)

    def build_id(self) -> str:
        out = subprocess.run(
            [self.binary, "--version"], capture_output=True, text=True, check=False, env=child_environment()
        )
        return out.stdout.strip() or out.stderr.strip()

    def credentials(self) -> DatasetCredentials:
        return DatasetCredentials("", "")

    def server_build(self) -> str:
        return file_build_id(Path(self.binary))

    def counting_tool(self) -> str:
        return valgrind_version()

    def initialize(self, datadir: Path, credentials: DatasetCredentials) -> None:
        datadir.mkdir(parents=True, exist_ok=True)
        tool = find_binary("mariadb-install-db") if self.server.flavour == "mariadb" else self.binary
        argv = [tool, *init_args(self.server.flavour, datadir, as_root=os.geteuid() == 0)]
        with workspace.current().temp("init-tmp") as tmp:
            # a private tmpdir (see private_tmpdir); mariadb-install-db hands the option to its bootstrap server
            code, output = _run_group([*argv, f"--tmpdir={tmp}"], f"{self.server.name} initialisation")
        if code != 0:
            raise ServerError(f"initialising a {self.server.flavour} datadir failed: {init_failure(output)}")
        bootstrap(self, datadir, credentials)

    @contextmanager
    def serve(self, launch: Launch) -> Iterator[LocalInstance]:
        datadir = launch.needed_datadir("local")
        callgrind = launch.callgrind
        space = workspace.current()
        run_dir = space.make("local")
        process: subprocess.Popen[bytes] | None = None
        try:
            variables = launch.server_variables(self.server.flavour)
            cnf = write_cnf(run_dir / "my.cnf", self.server, variables, tmpdir=private_tmpdir(run_dir))
            port = free_port()
            log_path = run_dir / "error.log"
            argv = [
                self.binary,
                f"--defaults-file={cnf}",
                f"--datadir={datadir}",
                f"--port={port}",
                "--bind-address=127.0.0.1",
                # relative: the server creates it in its datadir (socket paths must stay under 108 bytes)
                "--socket=server.sock",
                f"--pid-file={run_dir / 'mysqld.pid'}",
                f"--log-error={log_path}",
                *user_args(as_root=os.geteuid() == 0),
            ]
            out_dir = run_dir / "callgrind"
            if callgrind is not None:
                out_dir.mkdir()
                argv = [*callgrind.argv(str(out_dir), vgdb_dir=str(out_dir)), *argv]
            if self.server.cpuset:
                argv = ["taskset", "-c", self.server.cpuset, *argv]
            env = child_environment()
            if callgrind is not None:
                env.update(server_environment(env))
            with (run_dir / "stdout.log").open("wb") as out:
                process = subprocess.Popen(
                    argv,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                    env=env,
                )
            space.track(process.pid, f"server {self.server.name}")
            proc = process

            def log_tail() -> str:
                return _tail(log_path) if log_path.exists() else _tail(run_dir / "stdout.log")

            version, endpoint = launch.ready(
                self.server, port, self.binary, alive=lambda: proc.poll() is None, log_tail=log_tail
            )
            control = Control(out_dir, process.pid, vgdb_dir=str(out_dir)) if callgrind else None
            yield LocalInstance(endpoint, process, version, log_path, control)
        finally:
            if process is not None:
                # a counted server's datadir is a throwaway copy and its counts are dumped: no shutdown to wait for
                stop_process(process, grace_s=0.0 if callgrind else 60.0)
                space.untrack(process.pid)
            shutil.rmtree(run_dir, ignore_errors=True)
