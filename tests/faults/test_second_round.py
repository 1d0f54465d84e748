"""The second fault round (issue 21): baselines that lie, inputs that reach the server, secrets, hangs.

Each case runs ``dbperf`` as a user would, against real servers, and records a row of the fault matrix.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import REPO
from support.faults import Fault, closing_line, quick, record, wait_for_progress
from support.integration import processes_of, unprivileged_user

pytestmark = pytest.mark.integration


def _one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    line = closing_line(out.stderr)
    assert line.startswith("dbperf: error: "), line
    return line


def _baseline_of_earlier(fault: Fault, *, cost: bool = False) -> tuple[Path, dict[str, Any]]:
    """A real baseline file written from the case's earlier run (a cost one: the same, relabelled)."""
    from harness.judge.baseline_writer import write_baseline
    from harness.store import Store

    baselines = fault.root / "baselines"
    path = write_baseline(baselines, [Store(fault.store).get(fault.earlier)])
    doc = json.loads(path.read_text())
    if cost:
        path.unlink()
        path = baselines / "cost" / "mariadb-local" / "oltp_point_select" / "quick" / "1t.json"
        path.parent.mkdir(parents=True)
        doc |= {"kind": "cost", "cost": {"backend": "callgrind", "tool": "valgrind-3.19.0", "arch": "x86_64"}}
        doc["samples"] = {"instr_per_txn": [21_000.0]}
    return path, doc


# -- 2, 3: baselines with no samples or meaningless numbers ---------------------------------------


@pytest.mark.parametrize(
    ("what", "kind", "field", "value", "command"),
    [
        ("cost baseline with instr_per_txn: []", "cost", "instr_per_txn", [], "gate"),
        ("timing baseline with a NaN sample", "time", "qps", [math.nan], "gate"),
        ("timing baseline with an Infinity sample", "time", "p95_ms", [math.inf], "judge"),
        ("cost baseline with a 0 sample", "cost", "instr_per_txn", [0.0], "gate"),
        ("timing baseline with a negative sample", "time", "qps", [-5.0], "judge"),
    ],
)
def test_baselines_with_no_or_meaningless_samples(
    fault: Fault, what: str, kind: str, field: str, value: list[float], command: str
):
    path, doc = _baseline_of_earlier(fault, cost=kind == "cost")
    doc["samples"][field] = value
    path.write_text(json.dumps(doc))  # json writes NaN and Infinity as Python reads them back
    root = fault.root / "baselines"
    if command == "gate":
        args = ["gate", *quick()[1:], "--baselines-dir", str(root), *(["--cost"] if kind == "cost" else [])]
    else:
        args = ["judge", "--all", "--mode", "baseline", "--baselines-dir", str(root), "--store", str(fault.store)]
    out = fault.run(*args, timeout_s=300)
    line = _one_line_error(out)
    assert out.returncode == 2, line  # a harness error, never 0 (a false pass) or 1 (a regression)
    assert str(path) in line and f"samples.{field}" in line, line
    assert "not measured here" not in out.stdout + out.stderr  # the machine is not blamed
    assert fault.runs() == fault.runs()[:1]  # nothing was measured: the design check read the file first
    leaks = fault.leaks()
    assert leaks == []
    record(f"{what}: dbperf {command}", out.returncode, line, "nothing new", leaks)


# -- 4: a baseline whose identity is not the run's -----------------------------------------------


@pytest.mark.parametrize(
    ("what", "field", "value"),
    [
        ("timing baseline edited to another server_version", "server_version", "11.8.3-MariaDB"),
        ("timing baseline edited to another build_id", "build_id", "0" * 40),
    ],
)
def test_a_baseline_of_another_server_is_not_judged(fault: Fault, what: str, field: str, value: str):
    path, doc = _baseline_of_earlier(fault)
    doc["server"][field] = value
    doc["samples"] = {k: None if v is None else v * 12 for k, v in doc["samples"].items()}  # enough to decide
    doc["provenance"]["run_ids"] *= 12
    path.write_text(json.dumps(doc))
    args = quick("--baselines-dir", str(fault.root / "baselines"), "--json")[1:]
    args[args.index("--repetitions") + 1] = "6"
    out = fault.run("gate", *args, timeout_s=300)
    assert out.returncode == 0, out.stderr  # not a regression and not an error: nothing could be judged
    verdict = json.loads(out.stdout)["verdicts"][0]
    assert verdict["outcome"] == "no_baseline", verdict
    reason = verdict["metrics"][0]["reason"]
    assert "not comparable" in reason and value[:12] in reason and "dbperf compare" in reason, reason
    assert all(m["outcome"] not in {"pass", "regression", "improvement"} for m in verdict["metrics"])
    leaks = fault.leaks()
    assert leaks == []
    record(what + ": dbperf gate", out.returncode, "nothing judged: " + reason[:140], "the measured run", leaks)


# -- 11: inputs that reach the server's my.cnf ----------------------------------------------------


def _servers_with(fault: Fault, name: str, text: str, *, conf: tuple[str, str] | None = None) -> Path:
    servers = fault.root / "servers"
    if not servers.exists():
        shutil.copytree(REPO / "servers", servers)
    local = (servers / "mariadb-local.toml").read_text().replace('"mariadb-local"', f'"{name}"')
    (servers / f"{name}.toml").write_text(local + text)
    if conf is not None:
        (servers.parent / conf[0]).write_text(conf[1])
    return servers


@pytest.mark.parametrize(
    ("what", "how", "mention"),
    [
        ("--head-var init_file=<file.sql>", "head-var-init", "'init_file' runs the SQL in a file"),
        ("--head-var with a newline in its value", "head-var-newline", "newline"),
        ("--head-var with a newline in its name", "head-var-name", "is not a name"),
        ("--head-var log_error=/etc/x (a path outside)", "head-var-path", "outside the server's data folder"),
        ("server file: config_file = '../secret.txt'", "config-outside", "outside the servers folder"),
        ("server file: [variables] plugin_load_add", "server-plugin", "'plugin_load_add' loads a shared library"),
        ("server file's my.cnf: init-connect", "cnf-init", "'init-connect', which runs SQL on every connection"),
        ("server file's my.cnf: !include", "cnf-include", "'!include', which reads other files"),
    ],
)
def test_server_inputs_that_would_run_code_are_refused(fault: Fault, what: str, how: str, mention: str):
    secret = fault.root / "secret.sql"
    secret.write_text("CREATE DATABASE planted;\n")
    args: list[str]
    if how.startswith("head-var"):
        var = {
            "head-var-init": f"init_file={secret}",
            "head-var-newline": "max_connections=500\ninit_file=/tmp/x.sql",
            "head-var-name": "max_connections\ninit_file=/tmp/x.sql",
            "head-var-path": "log_error=/etc/dbperf-planted.log",
        }[how]
        args = ["compare", *quick()[1:], "--base", "mariadb-local", "--head-var", var]
    else:
        text = {
            "config-outside": 'config_file = "../secret.sql"\n',
            "server-plugin": '\n[variables]\nplugin_load_add = "ha_blackhole"\n',
            "cnf-init": 'config_file = "conf/evil.cnf"\n',
            "cnf-include": 'config_file = "conf/evil.cnf"\n',
        }[how]
        servers = _servers_with(fault, "planted", "")
        body = (servers / "planted.toml").read_text()
        if "config_file" in text:
            body = body.replace('config_file = "conf/mariadb.cnf"\n', text)
        else:
            body += text
        (servers / "planted.toml").write_text(body)
        cnf = {"cnf-init": "[mysqld]\ninit-connect = 'DROP DATABASE sbtest'\n", "cnf-include": f"!include {secret}\n"}
        if how in cnf:
            (servers / "conf" / "evil.cnf").write_text(cnf[how])
        args = [*quick("--servers-dir", str(servers), "--server", "planted")]
    out = fault.run(*args, timeout_s=120)
    line = _one_line_error(out)
    assert out.returncode == 2, line
    assert mention in line, line
    assert fault.runs() == fault.runs()[:1]  # refused before any server started
    leaks = fault.leaks()
    assert leaks == []
    record(what, out.returncode, line, "nothing", leaks)


def test_an_allowed_unsafe_variable_reaches_the_server(fault: Fault):
    """The way out works: a server file that says allow_unsafe_variables = true gets its init_file run."""
    sql = fault.root / "servers" / "conf" / "init.sql"
    servers = _servers_with(fault, "trusted", f'allow_unsafe_variables = true\n\n[variables]\ninit_file = "{sql}"\n')
    sql.write_text("SET GLOBAL max_statement_time = 1000;\n")
    out = fault.run(*quick("--servers-dir", str(servers), "--server", "trusted", "--json"), timeout_s=300)
    assert out.returncode == 0, out.stderr
    (run,) = [r for r in fault.runs() if r["server"] == "trusted"]
    from harness.store import Store

    stored = Store(fault.store).get(str(run["run_id"]))
    assert stored.variables["max_statement_time"].startswith("1000"), stored.variables.get("max_statement_time")


# -- 12: secrets in the environment of child processes -------------------------------------------


def _environs_with(marker: str) -> dict[str, bytes]:
    """Command name -> environment of every live process whose environment holds ``marker``."""
    found = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes()
            name = (proc / "comm").read_text().strip()
        except OSError:
            continue
        if marker.encode() in environ:
            found[f"{name}[{proc.name}]"] = environ
    return found


def test_children_never_see_the_store_password_or_tokens(fault: Fault):
    secret = "s3cr3t-" + fault.root.name
    fault.extra_env.update({"PGPASSWORD": secret, "BENCHER_API_TOKEN": secret, "MY_SERVICE_PASSWORD": secret})
    streamed = fault.start(*quick(time_s=20))
    wait_for_progress(streamed, at_least_s=2)
    children = _environs_with(str(fault.tmpdir))  # what dbperf started (they inherit the case's TMPDIR)
    leaking = sorted(name for name, environ in children.items() if secret.encode() in environ)
    names = " ".join(children)
    streamed.end()
    assert "mariadbd" in names and "sysbench" in names, names  # the check looked at the real children
    parent = [n for n in leaking if n.startswith(("dbperf", "python"))]
    assert sorted(set(leaking) - set(parent)) == [], leaking
    record("PGPASSWORD and tokens set: /proc/<pid>/environ of mariadbd and sysbench", 0, f"not in {names}", "-", [])


# -- 5, 7: a frozen sysbench, a stopped server ------------------------------------------------------


def _child_pid(fault: Fault, comm: str) -> int:
    """The pid of the process named ``comm`` that this case's dbperf started (it holds the case's TMPDIR)."""
    (name,) = [n for n in _environs_with(str(fault.tmpdir)) if n.startswith(comm + "[")]
    return int(name[len(comm) + 1 : -1])


@pytest.mark.parametrize(
    ("what", "comm", "cause"),
    [
        ("sysbench stopped (SIGSTOP) mid-run", "sysbench", "sysbench itself (pid {pid}) is stopped"),
        ("the server stopped (SIGSTOP mariadbd) mid-run", "mariadbd", "the server process (pid {pid}) is stopped"),
    ],
)
def test_a_frozen_client_or_server_is_named_within_seconds(fault: Fault, what: str, comm: str, cause: str):
    import os
    import signal
    import time

    streamed = fault.start(*quick(time_s=40))
    wait_for_progress(streamed, at_least_s=2)
    pid = _child_pid(fault, comm)
    os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        line = streamed.wait_for_stderr(lambda text: "no progress from sysbench" in text, timeout_s=120)
        noticed_s = time.monotonic() - stopped
    finally:
        os.kill(pid, signal.SIGCONT)
    assert cause.format(pid=pid) in line, line
    assert noticed_s < 30, f"noticed after {noticed_s:.0f} s"  # 10 s of silence, then the notice (was 158-181 s)
    code = streamed.wait(timeout_s=300)
    assert "Traceback" not in streamed.stderr_text()
    leaks = fault.leaks()
    assert leaks == []
    record(what, code, line.strip()[:200] + f" (after {noticed_s:.0f} s)", "the run", leaks)


# -- 8, 9: a damaged snapshot in the dataset cache -------------------------------------------------


def _damage_snapshot(snapshot: Path, how: str) -> None:
    table = next((snapshot / "datadir" / "sbtest").glob("sbtest1.ibd"))
    if how == "deleted .ibd":
        table.unlink()
    elif how == "truncated .ibd":
        with table.open("r+b") as handle:
            handle.truncate(table.stat().st_size // 2)
    elif how == "overwritten pages":
        with table.open("r+b") as handle:
            for offset in range(3 * 16384, table.stat().st_size, 4 * 16384):
                handle.seek(offset + 100)
                handle.write(b"\x5a" * 512)
    else:  # truncated meta.json
        meta = snapshot / "meta.json"
        meta.write_bytes(meta.read_bytes()[:40])


@pytest.fixture(scope="module")
def pristine_cache(dbperf: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset cache holding the quick run's snapshot, prepared by a real run once for the module."""
    folder = tmp_path_factory.mktemp("pristine")
    cache = folder / "cache"
    out = dbperf.run(*quick("--cache-dir", str(cache), "--store", str(folder / "dbperf.duckdb")), timeout_s=300)
    assert out.returncode == 0, out.stderr
    return cache


@pytest.mark.parametrize("how", ["deleted .ibd", "truncated .ibd", "overwritten pages", "truncated meta.json"])
def test_a_damaged_snapshot_is_found_and_prepared_again(fault: Fault, pristine_cache: Path, how: str):
    cache = fault.root / "cache"
    shutil.copytree(pristine_cache, cache, symlinks=True)
    (snapshot,) = (cache / "snapshots").glob("mariadb-*")
    _damage_snapshot(snapshot, how)
    out = fault.run(*quick("--cache-dir", str(cache)), timeout_s=300)
    assert out.returncode == 0, out.stderr[-2000:]
    (line,) = [ln for ln in out.stderr.splitlines() if "is damaged" in ln]
    assert str(snapshot) in line and "preparing it again" in line, line
    assert "meta.json" in line if how == "truncated meta.json" else "sbtest1.ibd" in line, line
    runs = fault.runs()  # the earlier run and this one
    assert len(runs) == 2 and all(r["status"] == "ok" for r in runs), runs
    again = fault.run(*quick("--cache-dir", str(cache)), timeout_s=300)  # the rebuilt snapshot is whole
    assert again.returncode == 0 and "is damaged" not in again.stderr, again.stderr[-2000:]
    leaks = fault.leaks(cache)
    assert leaks == []
    record(f"damaged snapshot in the cache ({how})", out.returncode, line.strip()[:200], "the run", leaks)


# -- 1: the PostgreSQL catalog goes away while the run measures ------------------------------------


def test_a_catalog_gone_mid_run_keeps_every_repetition(fault: Fault, catalog, tmp_path: Path):
    from support.catalog import PASSWORD

    url = catalog.new_lake(f"gone_{tmp_path.name[-12:]}".replace("-", "_"), tmp_path / "lake")
    fault.extra_env["PGPASSWORD"] = PASSWORD
    args = quick("--store", url, time_s=6)
    args[args.index("--repetitions") + 1] = "2"
    streamed = fault.dbperf.start(*args, env=fault.env)
    fault.started.append(streamed)
    wait_for_progress(streamed, at_least_s=2)
    catalog.tool("stop")  # the postmaster goes: the first save fails, and the second
    try:
        code = streamed.wait(timeout_s=600)
    finally:
        catalog.tool("start", "--port", str(catalog.port))  # the same catalog, back
    stderr = streamed.stderr_text()
    line = closing_line(stderr)
    assert code == 2, stderr[-3000:]
    kept = sorted({word.strip("`;:,") for word in line.split() if word.strip("`;:,").endswith(".json")})
    assert len(kept) == 2 and "dbperf import unsaved" in line, line  # repetition 2 ran and was kept too
    assert all(Path(k).is_file() for k in kept)
    stored = fault.dbperf.run("import", "unsaved", *kept, "--store", url, env=fault.env, timeout_s=300)  # back
    assert stored.returncode == 0, stored.stderr
    leaks = fault.leaks()
    assert leaks == []
    record(
        "PostgreSQL catalog stopped while the run measures (2 repetitions)", code, line[:220], "2 unsaved files", leaks
    )


# -- 6: the PostgreSQL catalog freezes (SIGSTOP) while the run measures ------------------------------


def _cluster_pids(catalog) -> list[int]:
    """The postmaster (first line of postmaster.pid) and every backend it forked."""
    postmaster = int((catalog.root / "data" / "postmaster.pid").read_text().split()[0])
    children = [int(stat.parent.name) for stat in Path("/proc").glob("[0-9]*/stat") if _ppid(stat) == postmaster]
    return [postmaster, *children]


def _ppid(stat: Path) -> int:
    try:
        return int(stat.read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_a_frozen_catalog_is_waited_for_by_the_clock_then_kept_in_files(fault: Fault, catalog, tmp_path: Path):
    import os
    import signal
    import time

    from support.catalog import PASSWORD

    url = catalog.new_lake(f"frozen_{tmp_path.name[-12:]}".replace("-", "_"), tmp_path / "lake")
    fault.extra_env["PGPASSWORD"] = PASSWORD
    args = quick("--store", url, "--store-timeout", "15", time_s=6)
    args[args.index("--repetitions") + 1] = "2"
    streamed = fault.dbperf.start(*args, env=fault.env)
    fault.started.append(streamed)
    wait_for_progress(streamed, at_least_s=2)
    pids = _cluster_pids(catalog)
    for pid in pids:  # the whole cluster stops answering; its TCP connections stay open
        os.kill(pid, signal.SIGSTOP)
    frozen = time.monotonic()
    try:
        notice = streamed.wait_for_stderr(lambda line: "still saving run" in line, timeout_s=120)
        code = streamed.wait(timeout_s=300)
        took_s = time.monotonic() - frozen
        later = fault.dbperf.run(*args, env=fault.env, timeout_s=300)  # a run that starts while it is frozen
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    opening = closing_line(later.stderr)
    assert later.returncode == 2 and "did not answer for 15 s while trying to open it" in opening, later.stderr
    assert "running mariadb-local" not in later.stderr  # refused before anything is measured
    stderr = streamed.stderr_text()
    line = closing_line(stderr)
    assert code == 2, stderr[-3000:]
    assert "waiting for the store" in notice and "catalog that does not answer" in notice, notice
    assert "up to 15 s" in notice, notice
    assert "did not answer for 15 s" in line, line
    kept = sorted({word.strip("`;:,") for word in line.split() if word.strip("`;:,").endswith(".json")})
    assert len(kept) == 2 and "dbperf import unsaved" in line, line  # repetition 2 went straight to a file
    assert took_s < 120, f"dbperf ended {took_s:.0f} s after the freeze"  # one 15 s limit, not one per run
    stored = fault.dbperf.run("import", "unsaved", *kept, "--store", url, env=fault.env, timeout_s=300)
    assert stored.returncode == 0, stored.stderr
    leaks = fault.leaks()
    assert leaks == []
    record(
        "PostgreSQL catalog frozen (SIGSTOP, every process) while the run measures, 2 repetitions, --store-timeout 15",
        code,
        notice.strip()[:160] + " … " + line[:200],
        "2 unsaved files",
        leaks,
    )
    record("PostgreSQL catalog frozen before the run starts, --store-timeout 15", 2, opening[:200], "nothing", leaks)


# -- 10: the main job as a user other than root ---------------------------------------------------


def test_the_main_job_runs_as_an_unprivileged_user(tmp_path: Path):
    """``dbperf run`` as a user with a writable home and nothing else: no root, no docker group.

    The user runs Debian's own python3.11 on this checkout's dependencies; both are bind-mounted under a
    world-readable folder, since a checkout (or its Python) may sit below a folder only root can enter."""
    import os
    import sys
    import tempfile

    python = Path("/usr/bin/python3.11")
    assert python.is_file(), "Debian's python3.11 is missing: tools/setup.sh installs python3-venv, which has it"
    user = unprivileged_user()
    base = Path(tempfile.mkdtemp(prefix="dbperf-unprivileged-"))
    base.chmod(0o755)
    home, repo, venv = base / "home", base / "repo", base / "venv"
    for folder in (home, repo, venv):
        folder.mkdir()
    shutil.chown(home, user, user)
    home.chmod(0o700)
    mounted: list[Path] = []
    try:
        for source, target in ((REPO, repo), (Path(sys.prefix), venv)):
            subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(target)], check=True, timeout=30)
            mounted.append(target)
        site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
        env = {
            "HOME": str(home),
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "PYTHONPATH": f"{site}:{repo}",
            "LANG": "C.UTF-8",
        }
        argv = ["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in env.items())]
        argv += [str(python), "-m", "harness", "run", "-s", "oltp_point_select", "--threads", "1", "--time", "2"]
        argv += ["--warmup", "0", "--repetitions", "1"]
        out = subprocess.run(argv, cwd=home, capture_output=True, text=True, check=False, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        assert "Traceback" not in out.stderr
        assert "1 run(s) stored, 0 failed." in out.stdout, out.stdout[-2000:]
        store = home / ".local" / "share" / "dbperf" / "dbperf.duckdb"
        assert store.is_file() and store.stat().st_uid != 0  # the user's own store, in the user's home
        assert processes_of(user) == []  # its server stopped: nothing left running
    finally:
        for pid in processes_of(user):
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        for target in reversed(mounted):
            subprocess.run(["umount", "-l", str(target)], check=False, timeout=30)
        shutil.rmtree(base, ignore_errors=True)
    record(
        "the main job (dbperf run) as an unprivileged user (runuser, own home, no docker group)",
        out.returncode,
        "1 run(s) stored, 0 failed. (was: chown ... to the 'root' user: Operation not permitted)",
        "the run, in the user's own store",
        "nothing",
    )
