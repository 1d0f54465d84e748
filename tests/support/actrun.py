"""Run this project's GitHub workflows offline with act (nektos/act), hermetically, on this host.

Jobs of every ``runs-on`` label run on the host (``-P LABEL=-self-hosted``); act copies the local
tree where a job checks out this repository; every other pinned ``uses:`` action is replaced by a
small composite stand-in from ``standins/`` (``--local-repository owner/repo@sha=DIR``); ``gh``,
``cargo`` and ``bencher`` are replaced by the PATH shims in ``shim/`` (fakes of GitHub's API and of
the Bencher CLI, at the seam where the workflow leaves this machine).

What act cannot see is kept by the stand-ins and shims under one state folder shared by every run of
a test session, so a ``workflow_run`` workflow can read an earlier run's artifacts::

    state/artifacts/<run id>/<name>/     uploaded artifacts
    state/pages/<run id>/                deployed GitHub Pages sites
    state/bencher/<n>/                   what `bencher run` received: argv.txt, bmf.json, token.txt
    state/github/                        what the gh shim stored (comments), github-calls.jsonl
    runs/<name>/                         per act run: command, log, summary/<job>.md, env/<job>.<n>.env

Rules learnt the hard way (docs/workflow-tests.md):

* act hands its own environment to every step and turns ``INPUT_*`` into ``inputs.*``: it runs under a
  scrubbed environment (no caller secrets, no ``DBPERF_*``), with ``.env``/``.secrets``/``.vars``/
  ``.actrc`` files disabled and a fake ``GITHUB_TOKEN`` (otherwise act asks ``gh auth token``).
* ``--dryrun`` executes steps on the host: never used.
* On timeout the step's ``dbperf`` processes get SIGINT first (act's cancel only kills the step's
  shell), so no server outlives the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "workflows"
STANDINS = HERE / "standins"
SHIM = HERE / "shim"
LABELS = ("self-hosted", "linux", "dbperf-trusted", "dbperf-pr", "ubuntu-24.04", "ubuntu-latest")
FAKE_GITHUB_TOKEN = "ghs_act_fake_token_0123456789"
_USES = re.compile(r"^\s*(?:-\s*)?uses:\s*([\w.-]+/[\w.-]+)@([0-9a-f]{40})\b", re.MULTILINE)


@dataclass(frozen=True)
class StepEnv:
    """The environment one step of a job ran with (saved by the bash shim)."""

    job: str
    number: int
    header: str
    variables: dict[str, str]


@dataclass
class ActRun:
    """What one act invocation did and left behind."""

    name: str
    run_id: int
    exit_code: int
    seconds: float
    folder: Path
    state: Path
    log: str = ""
    jobs: dict[str, str] = field(default_factory=dict)  # job id -> success | failure

    def summary(self, job: str) -> str:
        """Everything the job's steps wrote to ``$GITHUB_STEP_SUMMARY``, in order."""
        path = self.folder / "summary" / f"{job}.md"
        return path.read_text() if path.exists() else ""

    def artifact(self, name: str) -> Path:
        return self.state / "artifacts" / str(self.run_id) / name

    def pages(self) -> Path:
        return self.state / "pages" / str(self.run_id)

    def step_envs(self, job: str | None = None) -> list[StepEnv]:
        found = []
        for path in sorted((self.folder / "env").glob("*.env")):
            job_id, number, _ = path.name.rsplit(".", 2)
            if job is not None and job_id != job:
                continue
            lines = path.read_text().splitlines()
            variables = dict(line.split("=", 1) for line in lines[1:] if "=" in line)
            found.append(StepEnv(job_id, int(number), lines[0] if lines else "", variables))
        return sorted(found, key=lambda s: (s.job, s.number))

    def github_calls(self) -> list[dict[str, object]]:
        path = self.folder / "github-calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def job_results(self) -> list[tuple[str, str]]:
        """(job name, success | failure) of every job run, matrix jobs one by one (``jobs`` keys by id).

        act logs a job as ``<workflow>/<name>``, and a matrix job's with ``-<n>`` appended: both go.
        """
        log = self.folder / "act.log"
        entries = _entries(log.read_text(errors="replace")) if log.exists() else []
        out = []
        for e in entries:
            if "jobResult" in e:
                name = str(e.get("job", e.get("jobID", ""))).split("/", 1)[-1]
                out.append((re.sub(r"\)-\d+$", ")", name.strip()), str(e["jobResult"])))
        return out

    def tail(self, lines: int = 80) -> str:
        return "\n".join(self.log.splitlines()[-lines:])


def pinned_actions(repo: Path) -> list[tuple[str, str]]:
    """Every ``owner/repo@sha`` the repository's workflows use."""
    found: set[tuple[str, str]] = set()
    for path in sorted((repo / ".github" / "workflows").glob("*.yml")):
        found.update(_USES.findall(path.read_text()))
    return sorted(found)


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(proc.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT the step's dbperf processes (they stop their servers), then act, then kill what is left."""
    stopping = [pid for pid in _descendants(proc.pid) if "dbperf" in _cmdline(pid)]
    for pid in stopping:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + 60  # until they have stopped their servers and exited, not a fixed pause
    while any(Path(f"/proc/{pid}").exists() for pid in stopping) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        for pid in [*_descendants(proc.pid), proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)


@dataclass
class Act:
    """An act binary, the repository to run, and the state folder runs share."""

    binary: Path
    repo: Path
    state: Path
    python_bin: Path = field(default_factory=lambda: Path(sys.base_prefix) / "bin")

    def reserve_run_id(self) -> int:
        """A run id no act run of this session has: for artifacts a test lays out as a run would."""
        return self._next_run_id()

    def _next_run_id(self) -> int:
        counter = self.state / "run-counter"
        value = int(counter.read_text()) + 1 if counter.exists() else 1001
        counter.write_text(str(value))
        return value

    def run(
        self,
        name: str,
        event: str,
        payload: Mapping[str, object],
        *,
        workflow: str,
        variables: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        jobs: Sequence[str] = (),
        labels: Sequence[str] = (),
        only_labels: Sequence[str] | None = None,
        timeout_s: float = 1800,
    ) -> ActRun:
        """Run one event through one workflow file (or, with ``workflow=""``, every workflow file);
        returns when act has finished (or was stopped).

        ``labels``: more ``runs-on`` labels to run on the host (e.g. a fleet's runner classes);
        ``only_labels``: the only labels act may run jobs on (a machine with only those runners).
        """
        for rc in (".actrc", ".env", ".secrets", ".vars", ".input"):
            if (self.repo / rc).exists():
                raise RuntimeError(f"{self.repo / rc} would change what act does: remove it")
        run_id = self._next_run_id()
        folder = self.state / "runs" / name
        folder.mkdir(parents=True, exist_ok=True)
        event_file = folder / "event.json"
        event_file.write_text(json.dumps(payload, indent=1))
        locals_ = []
        for action, sha in pinned_actions(self.repo):
            short = action.split("/", 1)[1]
            standin = STANDINS / short
            if not (standin / "action.yml").is_file():
                raise RuntimeError(f"no stand-in for {action}@{sha} in {STANDINS}")
            locals_ += ["--local-repository", f"{action}@{sha}={standin}"]
        command = [
            str(self.binary), event,
            "-C", str(self.repo), "-W", f".github/workflows/{workflow}", "-e", str(event_file),
            *(
                arg
                for label in (only_labels if only_labels is not None else (*LABELS, *labels))
                for arg in ("-P", f"{label}=-self-hosted")
            ),
            "--pull=false", "--action-offline-mode", "--container-daemon-socket", "-", "--no-cache-server",
            "--action-cache-path", str(self.state / "act-cache"), "--rm",
            "--defaultbranch", "main",
            "--env-file", "/dev/null", "--secret-file", "/dev/null", "--var-file", "/dev/null",
            "--input-file", "/dev/null",
            "-s", f"GITHUB_TOKEN={FAKE_GITHUB_TOKEN}",
            "--env", f"GITHUB_RUN_ID={run_id}", "--env", "GITHUB_REPOSITORY=acme/dbperf",
            "--env", f"ACT_LOCAL_REPO={self.repo}",
            "--env", "GITHUB_REPOSITORY_OWNER=acme", "--env", "GITHUB_SERVER_URL=https://github.com",
            *(arg for k, v in (env or {}).items() for arg in ("--env", f"{k}={v}")),
            *(arg for k, v in (variables or {}).items() for arg in ("--var", f"{k}={v}")),
            *(arg for k, v in (secrets or {}).items() for arg in ("-s", f"{k}={v}")),
            *(arg for job in jobs for arg in ("-j", job)),
            "--json",
            *locals_,
        ]  # fmt: skip
        (folder / "command.txt").write_text(shlex.join(command) + "\n")
        path = [str(SHIM), str(self.python_bin), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin"]
        scrubbed = {
            "PATH": ":".join([*path, "/bin"]),
            "HOME": os.environ.get("HOME", "/root"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "XDG_CONFIG_HOME": str(self.state / "xdg-config"),
            "ACT_SUMMARY_DIR": str(folder / "summary"),
            "ACT_ENV_DUMP_DIR": str(folder / "env"),
            "ACT_ARTIFACTS_DIR": str(self.state / "artifacts"),
            "ACT_PAGES_DIR": str(self.state / "pages"),
            "ACT_BENCHER_DIR": str(self.state / "bencher"),
            "ACT_GITHUB_CALLS": str(folder / "github-calls.jsonl"),
            "ACT_GH_STATE": str(self.state / "github"),
        }
        started = time.monotonic()
        with (folder / "act.log").open("wb") as log:
            proc = subprocess.Popen(
                command, env=scrubbed, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
            try:
                code = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _stop(proc)
                code = -1
            finally:
                if proc.poll() is None:  # interrupted while waiting: never leave act and its servers running
                    _stop(proc)
        seconds = time.monotonic() - started
        text = (folder / "act.log").read_text(errors="replace")
        (folder / "result.txt").write_text(f"exit {code}, wall {seconds:.1f} s, run id {run_id}\n")
        return ActRun(name, run_id, code, seconds, folder, self.state, _readable(text), _job_results(text))


def _entries(text: str) -> list[dict[str, object]]:
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def _readable(text: str) -> str:
    """act's --json log as plain lines: ``[job] message``."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("{"):
            lines.append(line)
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            lines.append(line)
            continue
        lines.append(f"[{entry.get('jobID', '')}] {str(entry.get('msg', '')).rstrip()}")
    return "\n".join(lines)


def _job_results(text: str) -> dict[str, str]:
    results = {}
    for entry in _entries(text):
        if "jobResult" in entry:
            results[str(entry.get("jobID", ""))] = str(entry["jobResult"])
    return results
