"""The ``dbperf`` command line, run as users run it: a subprocess (issue 2, "What users must be able to do")."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import click
import pytest
from support import REPO
from support.cli import one_line_error
from support.integration import PROGRESS_AT

from harness.cli import cli
from harness.store import Store

pytestmark = pytest.mark.integration

REQUIRED_KEYS = ("qps", "tps", "p95_ms", "p99_ms", "errors_per_s", "server_version", "run_id", "status")
SYSBENCH_LOG = REPO / "tests" / "data" / "sysbench" / "oltp_read_write.log"


def test_run_json_progress_and_runs_listing(dbperf, store_path):
    streamed = dbperf.start(
        "run",
        "--scenario",
        "oltp_point_select",
        "--server",
        "mariadb-local",
        "--profile",
        "quick",
        "--threads",
        "2",
        "--time",
        "3",
        "--warmup",
        "1",
        "--store",
        store_path,
        "--json",
    )
    code = streamed.wait(timeout_s=300)
    stderr = streamed.stderr_text()
    assert code == 0, stderr

    # --json: stdout is exactly one JSON document
    doc = json.loads(streamed.stdout_text())
    assert isinstance(doc, dict), doc
    missing = [k for k in REQUIRED_KEYS if k not in doc]
    assert not missing, f"missing keys {missing} in {doc}"
    assert doc["status"] == "ok"
    assert doc["qps"] > 100 and doc["tps"] > 100
    assert 0 < doc["p95_ms"] <= doc["p99_ms"]
    assert doc["errors_per_s"] == 0
    assert str(doc["server_version"]).startswith("10.11")
    assert doc["threads"] == 2 and doc["scenario"] == "oltp_point_select"

    # live progress on stderr: one line per second (elapsed, QPS, p95), arriving as the run goes
    progress = [(at, int(m.group(1))) for at, line in streamed.stderr if (m := PROGRESS_AT.match(line))]
    elapsed = [s for _, s in progress]
    assert elapsed[:4] == [1, 2, 3, 4] or elapsed == list(range(1, len(elapsed) + 1)), stderr
    assert len(progress) >= 3, f"expected ~4 progress lines for 1 s warm-up + 3 s:\n{stderr}"
    arrival = [at for at, _ in progress]
    span = arrival[-1] - arrival[0]
    assert span >= 0.5 * (len(progress) - 1), f"progress lines arrived in a burst ({span:.2f} s):\n{stderr}"

    # dbperf runs --json lists it, with the same numbers
    runs = dbperf.runs(store_path)
    assert [r["run_id"] for r in runs] == [doc["run_id"]]
    assert runs[0]["status"] == "ok"
    assert runs[0]["qps"] == pytest.approx(doc["qps"])
    # ... and so does the table form
    table = dbperf.run("runs", "--store", store_path)
    assert table.returncode == 0, table.stderr
    assert "oltp_point_select" in table.stdout and "mariadb-local" in table.stdout
    # ... with what --group needs: the run's id and group, and when it started
    assert doc["run_id"] in table.stdout and runs[0]["group_id"] and str(runs[0]["group_id"]) in table.stdout
    assert str(doc["started_at"])[:10] in table.stdout


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found: list[tuple[tuple[str, ...], click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # the top group imports its commands on demand
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append(((*prefix, name), command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, (*prefix, name)))
    return found


def test_help_of_every_command(dbperf):
    top = dbperf.run("--help")
    assert top.returncode == 0, top.stderr
    names = cli.list_commands(click.Context(cli))
    for name in names:
        assert name in top.stdout, f"dbperf --help does not mention '{name}'"
    assert "run" in names and "runs" in names and "import" in names

    commands = _commands(cli)

    def show(path: tuple[str, ...]):
        return dbperf.run(*path, "--help", timeout_s=120)

    with ThreadPoolExecutor(max_workers=4) as pool:
        outputs = list(pool.map(show, [path for path, _ in commands]))
    for (path, command), out in zip(commands, outputs, strict=True):
        label = "dbperf " + " ".join(path)
        assert out.returncode == 0, f"{label} --help: {out.stderr}"
        assert "Traceback" not in out.stderr
        assert (command.help or command.short_help or "").strip(), f"{label} has no help text"
        assert f"Usage: dbperf {' '.join(path)}" in out.stdout, out.stdout
        options = [
            opt
            for param in command.params
            if isinstance(param, click.Option) and not param.hidden
            for opt in param.opts
            if opt.startswith("--")
        ]
        unmentioned = [opt for opt in options if opt not in out.stdout]
        assert not unmentioned, f"{label} --help does not mention {unmentioned}"


@pytest.mark.parametrize(
    ("args", "mention"),
    [
        pytest.param(("--scenario", "no_such_scenario"), "no_such_scenario", id="unknown-scenario"),
        pytest.param(("--scenario", "oltp_point_select", "--threads", "two"), "--threads", id="threads-word"),
        pytest.param(("--scenario", "oltp_point_select", "--threads", "0"), "--threads", id="threads-zero"),
        pytest.param(("--scenario", "oltp_point_select", "--server", "no-such-server"), "no-such-server", id="server"),
    ],
)
def test_bad_run_arguments_exit_2_with_one_line(dbperf, store_path, args, mention):
    out = dbperf.run("run", *args, "--store", store_path, timeout_s=120)
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    line = one_line_error(out.stderr)
    assert mention in line, line
    assert line.startswith("dbperf: error:"), line


def test_import_sysbench_log(dbperf, store_path):
    out = dbperf.run("import", "sysbench-log", SYSBENCH_LOG, "--store", store_path, "--json", timeout_s=120)
    assert out.returncode == 0, out.stderr
    imported = json.loads(out.stdout)
    assert len(imported) == 1

    runs = dbperf.runs(store_path)
    assert len(runs) == 1
    run = runs[0]
    assert run["run_id"] == imported[0]["run_id"]
    assert run["status"] == "ok"
    assert run["threads"] == 2
    # the numbers of the log's summary: 3507 transactions, 70140 queries in 3.0020 s, p95 2.14 ms
    assert run["tps"] == pytest.approx(3507 / 3.0020, rel=1e-3)
    assert run["qps"] == pytest.approx(70140 / 3.0020, rel=1e-3)
    assert run["p95_ms"] == pytest.approx(2.14)
    assert run["errors_per_s"] == 0
    stored = Store(store_path).get(str(run["run_id"]))
    assert [round(i.t_s) for i in stored.intervals] == [1, 2, 3]
    assert stored.source == "import"


def test_import_garbage_names_file_and_line(dbperf, store_path, tmp_path):
    garbage = tmp_path / "not-a-sysbench.log"
    garbage.write_text("sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\nthis is not sysbench output\n")
    out = dbperf.run("import", "sysbench-log", SYSBENCH_LOG, garbage, "--store", store_path, timeout_s=120)
    assert out.returncode == 2, (out.stdout, out.stderr)
    line = one_line_error(out.stderr)
    assert re.search(re.escape(str(garbage)) + r":\d+\b", line), line
    # every file is checked before any is stored: the good log did not go in either
    assert dbperf.runs(store_path) == []
