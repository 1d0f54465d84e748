"""An external MySQL-protocol server (a separately started MariaDB standing in for TiDB, a cloud MySQL
or a staging box): benchmarked end to end with ``dbperf run`` and ``dbperf compare``, and its faults:
a closed port, a wrong password, and errors 1040 and 1461 forced through low limits on the server."""

from __future__ import annotations

import json
import threading
import time

import pytest
from support.faults import ExternalServer, Fault, closing_line, quick, record, wait_for_progress
from support.integration import command_lines

pytestmark = pytest.mark.integration


def _on(fault: Fault, ext: ExternalServer, password: str | None = None) -> None:
    fault.extra_env = {ext.password_env: ext.password if password is None else password}


def _args(ext: ExternalServer, server: str = "ext-mariadb", *extra: str, time_s: int = 1) -> list[str]:
    return quick("--server", server, "--servers-dir", str(ext.servers_dir), *extra, time_s=time_s)


def test_external_run_end_to_end_keeps_the_password_out_of_every_command_line(fault: Fault, external: ExternalServer):
    _on(fault, external)
    seen: dict[str, list[str]] = {"sysbench": [], "leaks": []}
    done = threading.Event()

    def watch() -> None:  # every process's command line, all through the run
        while not done.is_set():
            for _, cmdline in command_lines():
                ours = str(fault.tmpdir) in cmdline  # (other dbperf versions on this machine are not ours)
                if external.password in cmdline or (ours and "--mysql-password" in cmdline):
                    seen["leaks"].append(cmdline)
                if ours and "sysbench" in cmdline:
                    seen["sysbench"].append(cmdline)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    streamed = fault.start(*_args(external, "ext-mariadb", "--json", time_s=3))
    wait_for_progress(streamed, 1)
    code = streamed.wait(timeout_s=300)
    done.set()
    watcher.join(timeout=10)
    assert code == 0, streamed.stderr_text()
    doc = json.loads(streamed.stdout_text())
    assert doc["status"] == "ok" and doc["qps"] > 100 and doc["server_version"].startswith("10.11")
    assert seen["sysbench"], "sysbench was never seen running: the check proved nothing"
    assert all("--config-file=" in c for c in seen["sysbench"])
    assert seen["leaks"] == [], seen["leaks"]
    stored = {r["run_id"]: r for r in fault.runs()}
    assert stored[doc["run_id"]]["status"] == "ok" and fault.earlier in stored
    leaks = fault.leaks()
    assert leaks == []
    record(
        "external server, right password (run; /proc/*/cmdline watched)",
        code,
        f"qps {doc['qps']:,.0f}; the password in no command line ({len(seen['sysbench'])} sysbench samples)",
        "the ok run",
        leaks,
    )


def test_external_compare_end_to_end(fault: Fault, external: ExternalServer):
    _on(fault, external)
    out = fault.run(
        "compare",
        *("--base", "ext-mariadb", "--head", "ext-mariadb", "--servers-dir", str(external.servers_dir)),
        *("--scenario", "oltp_point_select", "--threads", "1", "--time", "1", "--warmup", "0", "--no-cost"),
        "--json",
        timeout_s=600,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["pairs"] >= 2 and doc["verdicts"], doc
    runs = [r for r in fault.runs() if r["run_id"] in doc["run_ids"]]
    assert len(runs) == 2 * doc["pairs"] and all(r["status"] == "ok" for r in runs)
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    outcomes = ", ".join(sorted({v["outcome"] for v in doc["verdicts"]}))
    record(
        "external server, A/A compare end to end",
        out.returncode,
        f"{doc['pairs']} pairs, verdict {outcomes}",
        f"{len(runs)} ok runs",
        leaks,
    )


@pytest.mark.parametrize(
    ("what", "server", "password", "mention"),
    [
        ("external server on a closed port", "ext-closed", None, "cannot reach external server 'ext-closed'"),
        ("external server, wrong password", "ext-mariadb", "wrong", "was reached but refused the login of 'bench'"),
    ],
)
def test_external_unreachable_or_refusing(
    fault: Fault, external: ExternalServer, what: str, server: str, password: str | None, mention: str
):
    _on(fault, external, password)
    out = fault.run(*_args(external, server), timeout_s=120)
    line = closing_line(out.stderr)
    assert out.returncode == 2, line
    assert mention in line, line
    if password is not None:
        assert f"${external.password_env}" in line and "1045" in line, line
    else:
        assert "check that it is running" in line, line
    failed = [r for r in fault.runs() if r["status"] == "failed"]
    assert len(failed) == 1 and mention in str(failed[0]["failure"])
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record(what, out.returncode, line, "failed run with its reason", leaks)


@pytest.mark.parametrize(
    ("code", "setting", "threads", "kind"),
    [(1040, "max_connections", "16", "too_many_connections"), (1461, "max_prepared_stmt_count", "4", "prepared_stmt")],
)
def test_external_server_limits(
    fault: Fault, external: ExternalServer, code: int, setting: str, threads: str, kind: str
):
    _on(fault, external)
    low = 10 if code == 1040 else 3  # (MariaDB's smallest max_connections is 10, plus one for SUPER)
    external.root_sql(f"SET GLOBAL {setting} = {low}")
    try:
        args = _args(external)
        args[args.index("--threads") + 1] = threads
        out = fault.run(*args, timeout_s=300)
    finally:
        external.root_sql(f"SET GLOBAL {setting} = DEFAULT" if code == 1461 else "SET GLOBAL max_connections = 100")
    line = closing_line(out.stderr)
    assert out.returncode == 2, line
    assert kind in line and f"error {code}" in line, line
    assert "Fix:" in line, line
    failed = [r for r in fault.runs() if r["status"] == "failed"]
    assert len(failed) == 1
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable()
    record(f"external server with {setting}={low} ({code})", out.returncode, line, "failed run with its reason", leaks)
