"""A hostile job and a fake GitHub for tools/pr-runner.sh (tests/workflows/test_runners.py).

Run three ways, with the standard library only:

* imported by the test (root): the throwaway job user, the world the runner script works in, and
  reading what the jobs printed;
* ``python3 job.py job RECORDS PRISTINE ARGS...`` as the job user, from the root-owned stand-in
  ``run.sh``: job 1 plants ``dbperf-planted`` in every place it can write (found by walking every file
  system as that user), job 2 looks for all of it; both print ``JOB``/``PLANTED`` lines on stdout;
* ``python3 job.py gh RECORDS ARGS...`` as root, the ``gh`` on PATH: hands out a just-in-time
  configuration and, before every job but the first, checks as root that nothing job 1 planted is left
  (``records/between-<n>.txt``: ``clean``, or one ``SURVIVED`` line per survivor).
"""

from __future__ import annotations

import contextlib
import ctypes
import grp
import os
import pwd
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MARK = "dbperf-planted"  # and the job user's uid: runs of this test on one machine at once never meet
#: Every kind of place job 1 plants in (the test checks each was planted).
KINDS = ("file", "dotfile", "edit", "runner", "crontab", "at", "shm", "sem", "msg", "mqueue", "process")
PSEUDO = {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "debugfs", "tracefs", "securityfs", "pstore", "bpf"}
PSEUDO |= {"configfs", "fusectl", "autofs", "binfmt_misc", "nsfs", "efivarfs", "rpc_pipefs"}
IPC_CREAT, O_CREAT, O_RDWR = 0o1000, 0o100, 0o2
IPC_KINDS = ("shm", "sem", "msg")


def _mark() -> str:
    return f"{MARK}-{os.getuid()}"


def _ipc_keys() -> dict[str, int]:
    """This job user's System V IPC keys (one per kind, from its uid)."""
    return {kind: 0x5EED0000 + os.getuid() * 4 + i for i, kind in enumerate(IPC_KINDS)}


@dataclass(frozen=True)
class JobUser:
    name: str
    uid: int
    gid: int
    home: Path


def mounts() -> list[str]:
    """Every mount point but /proc, /sys and the kernel's own file systems."""
    found = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, rest = line.partition(" - ")
        point = fields.split()[4].encode().decode("unicode_escape")
        if rest.split()[0] in PSEUDO or point.startswith(("/proc", "/sys")):
            continue
        found.add(point)
    return sorted(found)


def _find(*predicates: str) -> list[str]:
    out = []
    for point in mounts():
        done = subprocess.run(
            ["find", point, "-xdev", *predicates], capture_output=True, text=True, check=False, timeout=120
        )
        out += [line for line in done.stdout.splitlines() if line]
    return sorted(set(out))


def owned_anywhere(uid: int) -> list[str]:
    """The files and folders ``uid`` owns on every file system (a folder of its own stands for its content)."""
    return _find("-uid", str(uid), "-prune", "-print")


# -- the test's side (root) ------------------------------------------------------------------------


def create_user(home: Path) -> JobUser:
    """A throwaway account with a uid that owns no file here (the runner deletes whatever it owns)."""
    taken = {p.pw_uid for p in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}
    uid = random.choice([u for u in range(59000, 60000) if u not in taken])
    left = owned_anywhere(uid)
    if left:
        raise RuntimeError(f"uid {uid} already owns files ({left[:3]}): pick another")
    name = f"dbperf-job-{uid}"
    subprocess.run(
        ["useradd", "-u", str(uid), "-U", "-M", "-d", str(home), "-s", "/bin/bash", name], check=True, timeout=60
    )
    return JobUser(name, uid, pwd.getpwnam(name).pw_gid, home)


_CLEANUP = r"""
uid=$1 user=$2
crontab -r -u "$user" 2>/dev/null
atq 2>/dev/null | awk -v u="$user" '$NF == u {print $1}' | xargs -r atrm 2>/dev/null
for _ in $(seq 50); do pkill -KILL -u "$uid" 2>/dev/null; pgrep -u "$uid" >/dev/null || break; sleep 0.1; done
for k in shm:m:shmid sem:s:semid msg:q:msqid; do
  IFS=: read -r k f c <<< "$k"
  awk -v u="$uid" -v c="$c" 'NR == 1 {for (i = 1; i <= NF; i++) h[$i] = i; next}
    $h["uid"] == u || $h["cuid"] == u {print $h[c]}' "/proc/sysvipc/$k" | xargs -r -n1 ipcrm "-$f" 2>/dev/null
done
mq=$(mktemp -d) && mount -t mqueue mqueue "$mq" 2>/dev/null && { find "$mq" -uid "$uid" -delete; umount "$mq"; }
rmdir "$mq" 2>/dev/null
exit 0
"""


def remove_user(user: JobUser) -> None:
    """Everything of the account goes, even after a failed test: processes, cron, at, IPC, files, account."""
    subprocess.run(["bash", "-c", _CLEANUP, "cleanup", str(user.uid), user.name], check=False, timeout=120)
    for path in owned_anywhere(user.uid):
        with contextlib.suppress(OSError):
            if Path(path).is_dir() and not Path(path).is_symlink():
                shutil.rmtree(path)
            else:
                Path(path).unlink()
    for deny in (Path("/etc/cron.deny"), Path("/etc/at.deny")):  # tools/setup-runner.sh --role pr adds it
        if deny.exists() and user.name in deny.read_text().split():
            kept = "".join(line for line in deny.read_text().splitlines(True) if line.strip() != user.name)
            if kept or deny.name != "cron.deny":
                deny.write_text(kept)
            else:  # Debian's cron has none: the one the test's setup-runner run made goes
                deny.unlink()
    subprocess.run(["userdel", user.name], capture_output=True, check=False, timeout=60)
    subprocess.run(["groupdel", user.name], capture_output=True, check=False, timeout=60)


def prepare(base: Path, user: JobUser) -> dict[str, Path]:
    """The pristine runner (root's: run.sh and this file as job.py), records, the gh stand-in, DBPERF_HOME."""
    paths = {name: base / name for name in ("runner", "records", "shim", "state")}
    for path in paths.values():
        path.mkdir(mode=0o755)
    (paths["runner"] / "bin").mkdir(mode=0o755)
    shutil.copy(__file__, paths["runner"] / "job.py")
    (paths["runner"] / "run.sh").write_text(
        f'#!/bin/bash\nexec /usr/bin/python3 "$(dirname "$0")/job.py" job {paths["records"]} {paths["runner"]} "$@"\n'
    )
    (paths["shim"] / "gh").write_text(f'#!/bin/bash\nexec /usr/bin/python3 {__file__} gh {paths["records"]} "$@"\n')
    for script in (paths["shim"] / "gh", paths["runner"] / "run.sh"):
        script.chmod(0o755)
    (paths["runner"] / "job.py").chmod(0o644)
    paths["home"], paths["uid"] = user.home, Path(str(user.uid))
    return paths


@contextlib.contextmanager
def world(token: str) -> Iterator[dict[str, Path]]:
    """A throwaway job user and everything tools/pr-runner.sh needs around it, all removed on the way out."""
    base = Path(tempfile.mkdtemp(prefix="dbperf-pr-runner-"))
    base.chmod(0o755)
    user: JobUser | None = None
    try:
        user = create_user(base / "home")
        paths = prepare(base, user)
        paths["token"] = base / "token"
        paths["token"].write_text(token + "\n")
        paths["token"].chmod(0o600)
        paths["user"] = Path(user.name)
        yield paths
    finally:
        if user is not None:
            remove_user(user)
        shutil.rmtree(base, ignore_errors=True)


def pr_runner(
    repo: Path, world: dict[str, Path], *extra: str, timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    """``tools/pr-runner.sh`` of ``repo`` on ``world``; stdout is what the jobs printed (a root-owned file the
    wipe leaves alone, which the gh stand-in reads between jobs)."""
    env = {
        "PATH": f"{world['shim']}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "DBPERF_HOME": str(world["state"]),
        "LANG": "C.UTF-8",
    }
    argv = ["bash", str(repo / "tools" / "pr-runner.sh"), "--user", str(world["user"])]
    argv += ["--runner-dir", str(world["runner"]), "--repo", "acme/dbperf", "--token-file", str(world["token"])]
    stdout = world["records"] / "stdout.txt"
    with stdout.open("w") as out:
        done = subprocess.run(
            [*argv, *extra], env=env, stdout=out, stderr=subprocess.PIPE, text=True, check=False, timeout=timeout_s
        )
    return subprocess.CompletedProcess(done.args, done.returncode, stdout.read_text(), done.stderr)


def missing_tools() -> str:
    """What a job needs to plant every kind of place and this machine lacks ('' when nothing)."""
    missing = [tool for tool in ("crontab", "at", "atq", "ipcs", "runuser") if shutil.which(tool) is None]
    return f"missing {', '.join(missing)}: tools/setup.sh installs cron and at" if missing else ""


def planted(stdout: str) -> list[tuple[str, str]]:
    """(kind, what) of every ``PLANTED kind what`` line job 1 printed."""
    return [tuple(line.split(" ", 2)[1:]) for line in stdout.splitlines() if line.startswith("PLANTED ")]  # type: ignore[misc]


def job_records(stdout: str) -> list[dict[str, str]]:
    """Per job: user, groups, argv and env (``JOB <n> key=value`` lines)."""
    jobs: dict[str, dict[str, str]] = {}
    for line in stdout.splitlines():
        if line.startswith("JOB ") and "=" in line:
            number, rest = line[4:].split(" ", 1)
            key, value = rest.split("=", 1)
            job = jobs.setdefault(number, {"env": ""})
            if key == "env":
                job["env"] += value + "\n"
            else:
                job[key] = value
    return [jobs[n] for n in sorted(jobs)]


# -- the hostile job (the job user) ------------------------------------------------------------------


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _plant(pristine: Path) -> None:
    home, mark, keys = Path.home(), _mark(), _ipc_keys()
    for folder in _find("-type", "d", "-writable"):
        target = Path(folder) / mark
        with contextlib.suppress(OSError):
            target.write_text("planted by job 1\n")
            print(f"PLANTED file {target}")
    dotfiles = {
        ".gitconfig": "[user]\n\tname = planted\n",
        ".config/pip/pip.conf": "[global]\nindex-url = http://pypi.invalid/simple\n",
        ".pydistutils.cfg": "[easy_install]\nindex_url = http://pypi.invalid/\n",
    }
    site = subprocess.run(
        ["/usr/bin/python3", "-m", "site", "--user-site"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dotfiles[str(Path(site).relative_to(home) / f"{mark}.pth")] = "import os\n"
    for name, text in dotfiles.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"PLANTED dotfile {path}")
    for kind, path in (("edit", home / ".bashrc"), ("runner", home / "runner" / "run.sh")):
        with path.open("a") as f:
            f.write(f"\n# {mark}\n")
        print(f"PLANTED {kind} {path}")
    with contextlib.suppress(OSError), (pristine / "run.sh").open("a") as f:
        f.write(f"# {mark}\n")
        print("PRISTINE-WRITABLE")
    user = pwd.getpwuid(os.getuid()).pw_name
    cron = subprocess.run(["crontab", "-"], input=f"17 3 * * * echo {mark}\n", text=True, check=False)
    if cron.returncode == 0:
        print(f"PLANTED crontab {user}")
    at = subprocess.run(["at", "now + 2 hours"], input=f"echo {mark}\n", capture_output=True, text=True, check=False)
    if at.returncode == 0:
        print(f"PLANTED at {user}")
    libc = _libc()
    made = {
        "shm": libc.shmget(keys["shm"], 4096, IPC_CREAT | 0o600),
        "sem": libc.semget(keys["sem"], 1, IPC_CREAT | 0o600),
        "msg": libc.msgget(keys["msg"], IPC_CREAT | 0o600),
    }
    for kind, ident in made.items():
        if ident >= 0:
            print(f"PLANTED {kind} {ident}")
    libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
    if libc.mq_open(f"/{mark}".encode(), O_CREAT | O_RDWR, 0o600, None) >= 0:
        print(f"PLANTED mqueue {mark}")
    sleeper = subprocess.Popen(
        ["setsid", "sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True
    )
    print(f"PLANTED process {sleeper.pid}")


def _look(pristine: Path) -> None:
    """Job 2: each check prints ``JOB2 <what> ok`` or ``JOB2 <what> LEFT: ...``."""
    home, mark = Path.home(), _mark()

    def say(what: str, left: object) -> None:
        print(f"JOB2 {what} " + (f"LEFT: {left}" if left else "ok"))

    say("planted files anywhere", _find("-name", f"{mark}*", "-print"))
    skel = subprocess.run(
        ["diff", "-r", "-x", "runner", "/etc/skel", str(home)], capture_output=True, text=True, check=False
    )
    say("home is /etc/skel", skel.stdout.strip())
    runner = subprocess.run(
        ["diff", "-r", str(pristine), str(home / "runner")], capture_output=True, text=True, check=False
    )
    say("runner is the pristine one", runner.stdout.strip())
    cron = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    say("crontab", cron.stdout.strip())
    say("at jobs", subprocess.run(["atq"], capture_output=True, text=True, check=False).stdout.strip())
    libc = _libc()
    found = {kind: getattr(libc, f"{kind}get")(key, 0, 0) for kind, key in _ipc_keys().items()}
    say("System V IPC", {kind: ident for kind, ident in found.items() if ident >= 0})
    libc = _libc()
    libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int]
    say("POSIX message queue", libc.mq_open(f"/{mark}".encode(), O_RDWR) >= 0)
    sleepers = subprocess.run(
        ["pgrep", "-u", str(os.getuid()), "-x", "sleep"], capture_output=True, text=True, check=False
    )
    say("processes", sleepers.stdout.strip())


def job(records: Path, pristine: Path, argv: list[str]) -> None:
    number = (records / "gh-count").read_text().strip()
    print(f"JOB {number} user={pwd.getpwuid(os.getuid()).pw_name}")
    print(f"JOB {number} groups=" + " ".join(grp.getgrgid(g).gr_name for g in os.getgroups()))
    print(f"JOB {number} argv={' '.join(argv)}")
    for key, value in sorted(os.environ.items()):
        print(f"JOB {number} env={key}={value}")
    sys.stdout.flush()
    (_plant if number == "1" else _look)(pristine)


# -- the gh stand-in (root) ---------------------------------------------------------------------------


def _survivors(records: Path) -> list[str]:
    stdout = (records / "stdout.txt").read_text()
    out = []
    for kind, what in planted(stdout):
        path = Path(what)
        gone = not (path.exists() or path.is_symlink())
        if kind in ("file", "dotfile", "edit", "runner") and not gone:
            if kind in ("file", "dotfile") or MARK in path.read_text():
                out.append(f"SURVIVED {kind} {what}")
        elif (
            kind == "crontab"
            and subprocess.run(["crontab", "-l", "-u", what], capture_output=True, check=False).returncode == 0
        ):
            out.append(f"SURVIVED crontab of {what}")
        elif (
            kind == "at" and what in subprocess.run(["atq"], capture_output=True, text=True, check=False).stdout.split()
        ):
            out.append(f"SURVIVED at job of {what}")
        elif kind in IPC_KINDS:
            table = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
            if any(row.split()[1] == what for row in table):
                out.append(f"SURVIVED {kind} {what}")
        elif kind == "mqueue":
            with tempfile.TemporaryDirectory() as mq:
                subprocess.run(["mount", "-t", "mqueue", "mqueue", mq], check=True)
                try:
                    if (Path(mq) / what).exists():
                        out.append(f"SURVIVED mqueue {what}")
                finally:
                    subprocess.run(["umount", mq], check=True)
        elif kind == "process" and Path(f"/proc/{what}").exists():
            out.append(f"SURVIVED process {what}")
    return out


def gh(records: Path, argv: list[str]) -> None:
    token = "set" if os.environ.get("GH_TOKEN") else "unset"
    with (records / "gh-calls.txt").open("a") as log:
        log.write(f"token={token}\n" + "\n".join(argv) + "\n")
    count_file = records / "gh-count"
    count = int(count_file.read_text()) + 1 if count_file.exists() else 1
    if count > 1:
        survivors = _survivors(records)
        (records / f"between-{count}.txt").write_text("\n".join(survivors) + "\n" if survivors else "clean\n")
    count_file.write_text(f"{count}\n")
    count_file.chmod(0o644)
    print(f"JITCONFIG-{random.randrange(10**6)}")


if __name__ == "__main__":
    if sys.argv[1] == "job":
        job(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:])
    elif sys.argv[1] == "gh":
        gh(Path(sys.argv[2]), sys.argv[3:])
