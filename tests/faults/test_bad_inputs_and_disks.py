"""Bad files (scenarios, servers, baselines, stores, logs), bad settings, full disks, four runs at once."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support import REPO
from support.faults import Fault, closing_line, quick, record, tmpfs
from support.integration import processes_mentioning

pytestmark = pytest.mark.integration


def _one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    line = closing_line(out.stderr)
    assert line.startswith("dbperf: error: "), line
    return line


# -- bad scenario, server and setting files --------------------------------------------------------


@pytest.mark.parametrize(
    ("what", "kind", "text", "mention"),
    [
        ("bad TOML scenario file", "scenario", "name = 'broken\nscript = \n", "broken.toml"),
        ("bad TOML server file", "server", "flavour = [mariadb\n", "broken.toml"),
        ("server with max_connections = 'lots'", "server-lots", None, "is not a number"),
        ("server with max_connections = 5", "server-five", None, "below the 65 connections"),
    ],
)
def test_bad_files_refused_before_running(fault: Fault, what: str, kind: str, text: str | None, mention: str):
    scenarios, servers = fault.root / "scenarios", fault.root / "servers"
    shutil.copytree(REPO / "scenarios", scenarios)
    shutil.copytree(REPO / "servers", servers)
    args = quick("--scenarios-dir", str(scenarios), "--servers-dir", str(servers))
    if kind == "scenario":
        (scenarios / "broken.toml").write_text(text or "")
        args[args.index("oltp_point_select")] = "broken"
    elif kind == "server":
        (servers / "broken.toml").write_text(text or "")
        args += ["--server", "broken"]
    else:
        value = '"lots"' if kind == "server-lots" else "5"
        local = (servers / "mariadb-local.toml").read_text().replace("mariadb-local", "capped")
        (servers / "capped.toml").write_text(local + f"\n[variables]\nmax_connections = {value}\n")
        args += ["--server", "capped"]
    started = time.monotonic()
    out = fault.run(*args, timeout_s=120)
    line = _one_line_error(out)
    assert out.returncode == 2, line
    assert mention in line, line
    assert time.monotonic() - started < 60  # refused before any server started
    assert [r["run_id"] for r in fault.runs()] == [fault.earlier]
    leaks = fault.leaks()
    assert leaks == []
    record(what, out.returncode, line, "nothing (refused before running)", leaks)


def test_head_var_below_the_derived_minimum_is_refused(fault: Fault):
    out = fault.run(
        "compare",
        *("--base", "mariadb-local", "--head-var", "max_connections=5", "--scenario", "oltp_point_select"),
        *("--threads", "8", "--time", "1", "--warmup", "0", "--no-cost"),
        timeout_s=120,
    )
    line = _one_line_error(out)
    assert out.returncode == 2, line
    assert "max_connections=5, below the 72 connections oltp_point_select needs at 8 threads" in line, line
    assert "error 1040 would follow" in line and "raise it or lower --threads" in line
    assert [r["run_id"] for r in fault.runs()] == [fault.earlier]
    leaks = fault.leaks()
    assert leaks == []
    record("--head-var max_connections=5 (compare)", out.returncode, line, "nothing (refused before running)", leaks)


@pytest.mark.parametrize("threads", ["0", "two"])
def test_bad_thread_counts(fault: Fault, threads: str):
    args = quick()
    args[args.index("--threads") + 1] = threads
    out = fault.run(*args, timeout_s=60)
    line = _one_line_error(out)
    assert out.returncode == 2 and "--threads" in line, line
    leaks = fault.leaks()
    assert leaks == []
    record(f"--threads {threads}", out.returncode, line, "nothing", leaks)


# -- baselines ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("what", "content", "command"),
    [
        ("corrupt baseline (not JSON)", b'{"format": "dbperf-baseline", "format_version": 2, ', "gate"),
        ("binary baseline", bytes(range(256)) * 4, "gate"),
        ("binary baseline", bytes(range(256)) * 4, "baseline show"),
        ("truncated baseline", None, "gate"),
    ],
)
def test_damaged_baselines(fault: Fault, what: str, content: bytes | None, command: str):
    from harness.judge.baseline_writer import write_baseline
    from harness.store import Store

    baselines = fault.root / "baselines"
    earlier = Store(fault.store).get(fault.earlier)
    if content is None:  # a real baseline file (of the earlier run), cut in the middle
        path = write_baseline(baselines, [earlier])
        whole = path.read_bytes()
        path.write_bytes(whole[: len(whole) // 2])
    else:
        path = baselines / earlier.testbed.fingerprint / "mariadb-local" / "oltp_point_select" / "quick" / "1t.json"
        path.parent.mkdir(parents=True)
        path.write_bytes(content)
    if command == "gate":
        args = ["gate", *quick()[1:], "--baselines-dir", str(baselines), "--store", str(fault.store)]
    else:
        args = ["baseline", "show", "--baselines-dir", str(baselines)]
    out = fault.run(*args, timeout_s=120)
    line = _one_line_error(out)
    assert out.returncode == 2, line  # never 1, the regression code
    assert str(path) in line, line
    assert "record" in line or "delete" in line, line  # the way out
    assert fault.earlier_readable()
    leaks = fault.leaks()
    assert leaks == []
    record(f"{what}: dbperf {command}", out.returncode, line, "nothing new", leaks)


# -- damaged stores -------------------------------------------------------------------------------


def _damage(store: Path, how: str) -> None:
    if how == "garbage":
        store.write_bytes(b"this is not a DuckDB file\n" * 100)
    elif how == "truncated":
        with store.open("r+b") as handle:
            handle.truncate(store.stat().st_size // 4)
    else:  # flip bytes inside every data block: the stored checksums no longer match
        size = store.stat().st_size
        with store.open("r+b") as handle:
            for offset in range(12288 + 8, size, 262144):
                handle.seek(offset)
                handle.write(b"\xa5" * 64)


@pytest.mark.parametrize("how", ["garbage", "truncated", "checksum"])
def test_damaged_store_refused_before_measuring(fault: Fault, how: str):
    _damage(fault.store, how)
    out = fault.run(*quick(), timeout_s=120)
    line = _one_line_error(out)
    assert out.returncode == 2, line
    assert f"dbperf store rebuild --store {fault.store}" in line, line
    assert "qps" not in out.stderr  # nothing was measured
    leaks = fault.leaks()
    assert leaks == []
    # the way out the message names works: the file is rebuilt from the Parquet run folders
    rebuilt = fault.run("store", "rebuild", "--store", fault.store, timeout_s=120)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert fault.earlier_readable()
    record(f"{how} store: dbperf run", out.returncode, line, "nothing (refused before measuring)", leaks)


# -- garbage logs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"sysbench 1.0.20\n\nnot sysbench output at all\n", bytes(range(256)) * 8])
def test_garbage_sysbench_logs(fault: Fault, content: bytes):
    log = fault.root / "garbage.log"
    log.write_bytes(content)
    out = fault.run("import", "sysbench-log", log, "--store", fault.store, timeout_s=120)
    line = _one_line_error(out)
    assert out.returncode == 2 and str(log) in line, line
    assert [r["run_id"] for r in fault.runs()] == [fault.earlier]
    kind = "text" if content.startswith(b"sysbench") else "binary"
    record(f"garbage sysbench log ({kind})", out.returncode, line, "nothing", fault.leaks())


# -- full disks -----------------------------------------------------------------------------------


def _fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` to the last byte.

    Unbuffered writes: a buffered file kept the part of a write the disk could not take and raised
    ENOSPC again when it was closed, outside any handler (how much was left over depended on the
    size of what was on the disk before, so it failed on one run and passed on the next).
    """
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for block in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * block) > 0:
                    pass
    finally:
        os.close(fd)
    assert shutil.disk_usage(folder).free < 65536
    return filler


@pytest.mark.parametrize("fallback", ["data-home", "nowhere"])
def test_full_store_disk_keeps_the_measured_run(fault: Fault, fallback: str):
    with tmpfs(fault.root / "small", "24m") as small:
        store_dir = small / "store"
        shutil.copytree(fault.store.parent, store_dir)
        fault.store = store_dir / "dbperf.duckdb"
        if fallback == "nowhere":
            fault.data_home = small / "data-home"
        filler = _fill(small)
        out = fault.run(*quick("--json"), timeout_s=300)
        line = _one_line_error(out)
        assert out.returncode == 2, line
        doc = json.loads(out.stdout)
        assert doc["status"] == "ok" and doc["qps"] > 0  # measured, and printed
        assert "No space left on device" in line, line
        files = sorted((fault.data_home / "dbperf" / "unsaved").glob("*.json")) if fallback != "nowhere" else []
        if fallback == "data-home":
            assert [f.name for f in files] == [f"{doc['run_id']}.json"]
            assert f"dbperf import unsaved {files[0]}" in line, line
            stored = f"fallback file {files[0].name} in $XDG_DATA_HOME/dbperf/unsaved; imported afterwards"
        else:
            assert "no fallback folder could either" in line, line
            printed = next(x for x in out.stderr.splitlines() if "could not be saved anywhere" in x)
            assert doc["run_id"] in printed and '"qps"' in printed
            stored = "nowhere writable: the run's numbers printed on stderr as JSON"
        filler.unlink()
        assert fault.earlier_readable()
        if files:
            imported = fault.run("import", "unsaved", *map(str, files), timeout_s=120)
            assert imported.returncode == 0, imported.stderr
            assert doc["run_id"] in {r["run_id"] for r in fault.runs()}
            assert not files[0].exists()
        leaks = fault.leaks()
        assert leaks == []
        record(f"full disk under the store (fallback: {fallback})", out.returncode, line, stored, leaks)


def test_full_cache_disk(fault: Fault):
    with tmpfs(fault.root / "cache", "64m") as cache:
        out = fault.run(*quick("--cache-dir", str(cache)), timeout_s=300)
        line = _one_line_error(out)
        assert out.returncode == 2, line
        assert "no space left on device for a dataset snapshot in" in line and str(cache) in line, line
        assert "need about" in line and "--cache-dir" in line, line
        failed = [r for r in fault.runs() if r["status"] == "failed"]
        assert len(failed) == 1 and "no space left" in str(failed[0]["failure"])
        leaks = fault.leaks(cache)
        assert leaks == [] and fault.earlier_readable()
        record("full disk under the snapshot cache", out.returncode, line, "failed run with its reason", leaks)


def test_full_temp_disk(fault: Fault):
    with tmpfs(fault.root / "small-tmp", "64m") as small:
        fault.tmpdir = small
        out = fault.run(*quick(), timeout_s=300)
        line = _one_line_error(out)
        assert out.returncode == 2, line
        assert "no space left on device in" in line and "TMPDIR" in line and "a copy needs" in line, line
        failed = [r for r in fault.runs() if r["status"] == "failed"]
        assert len(failed) == 1
        leaks = fault.leaks()
        assert leaks == [] and fault.earlier_readable()
        record("full disk under the temp folder (TMPDIR)", out.returncode, line, "failed run with its reason", leaks)


# -- many writers, locks, shared CPUs --------------------------------------------------------------


def test_four_runs_at_once(fault: Fault):
    """Four runs into one store, on a cache none of them has prepared yet: one prepares, the others wait."""
    cache = fault.root / "fresh-cache"
    procs = []
    for name in "abcd":
        tmpdir = fault.root / f"tmp-{name}"
        tmpdir.mkdir()
        fault.extra_env = {"TMPDIR": str(tmpdir)}
        procs.append((tmpdir, fault.start(*quick("--json", "--cache-dir", str(cache), time_s=4))))
    docs, stderr = [], ""
    for tmpdir, streamed in procs:
        code = streamed.wait(timeout_s=600)
        assert code == 0, streamed.stderr_text()
        docs.append(json.loads(streamed.stdout_text()))
        stderr += streamed.stderr_text() + "\n"
        assert list(tmpdir.iterdir()) == []
    assert "waiting for another dbperf process that is preparing the same dataset" in stderr
    assert re.search(r"other dbperf runs \([^)]*pid \d+", stderr) and "not comparable" in stderr, stderr
    stored = {r["run_id"]: r for r in fault.runs()}
    assert {d["run_id"] for d in docs} | {fault.earlier} == set(stored)
    noted = [r for r in stored.values() if any("not comparable" in n for n in r.get("notes") or [])]
    assert noted, "no run noted that it shared its CPUs"
    fault.extra_env = {}
    leaks = fault.leaks(cache)
    assert leaks == []
    message = next(x for x in stderr.splitlines() if "other dbperf runs" in x).strip()
    record("four runs at once, one store, one cold cache", 0, message, "all 4 runs (noted: shared CPUs)", leaks)


def test_store_lock_wait_is_announced(fault: Fault):
    lock = fault.store.with_name(fault.store.name + ".lock")
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        streamed = fault.start(*quick())
        streamed.wait_for_stderr(lambda line: "waiting for the store" in line, timeout_s=120)
        fcntl.flock(handle, fcntl.LOCK_UN)
    code = streamed.wait(timeout_s=300)
    assert code == 0, streamed.stderr_text()
    message = next(line for _, line in streamed.stderr if "waiting for the store" in line).strip()
    leaks = fault.leaks()
    assert leaks == [] and fault.earlier_readable() and len(fault.runs()) == 2
    record("store locked by another process", code, message, "the run, once the lock was free", leaks)


@pytest.mark.parametrize("when", ["as its server starts", "while sysbench runs"])
def test_temp_disk_fills_while_a_cost_run_counts(fault: Fault, when: str):
    """TMPDIR fills during a cost run (case 8 of the second fault round): before the server's data folder is
    copied (an OSError from the workspace), or after sysbench has started under callgrind (a dump cut short)."""
    scenarios = fault.root / "scenarios"
    scenarios.mkdir()
    text = (REPO / "scenarios" / "oltp_point_select.toml").read_text()
    (scenarios / "oltp_point_select.toml").write_text(text.replace("events = 1000", "events = 20000"))
    with tmpfs(fault.root / "small-tmp", "400m") as small:
        fault.tmpdir = small
        args = [a for a in quick("--scenarios-dir", str(scenarios)) if a != "--no-cost"]
        streamed = fault.start(*args, "--cost")
        streamed.wait_for_stderr(lambda line: "under callgrind" in line, timeout_s=300)
        deadline = time.monotonic() + 300

        def sysbench_runs() -> bool:
            return any(" sysbench " in p or "/sysbench " in p for p in processes_mentioning(str(small)))

        while when == "while sysbench runs" and not sysbench_runs():
            assert streamed.proc.poll() is None and time.monotonic() < deadline, streamed.stderr_text()
            time.sleep(0.05)  # polling a state: sysbench running on this TMPDIR
        filler = _fill(small)
        code = streamed.wait(timeout_s=600)
        stderr = streamed.stderr_text()
        filler.unlink()
        line = closing_line(stderr)
        assert code == 2, stderr[-3000:]
        failed = [r for r in fault.runs() if r["status"] == "failed"]
        assert len(failed) == 1 and "No space left on device" in str(failed[0]["failure"]), failed
        assert "TMPDIR" in str(failed[0]["failure"]), failed
        leaks = fault.leaks()
        assert leaks == [] and fault.earlier_readable()
        record(
            f"full disk under the temp folder (TMPDIR) in a cost run, {when}",
            code,
            line[:220],
            "failed run with its reason",
            leaks,
        )
