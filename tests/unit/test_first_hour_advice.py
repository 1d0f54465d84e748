"""The first hour (issue 39): what dbperf suggests is runnable and right, and a raised design says what it
costs before it starts, stopping over its limit (harness/pipeline/design_check.py, advice.py; the CLI's
--max-minutes / --yes and the A/A note of ``compare``)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from support.factories import scenario

from harness.cli import cli
from harness.cli.gate_cmds import same_settings
from harness.config.settings import resolve_settings
from harness.errors import ConfigError
from harness.judge import design
from harness.judge.baselines import record_command
from harness.model import Server
from harness.pipeline import advice, design_check
from harness.pipeline.cases import Case
from harness.pipeline.design_check import DesignError, Limit, Planned, baseline_runs, check

REPO = Path(__file__).resolve().parents[2]
LOCAL = Server(name="mariadb-local", flavour="mariadb", version="10.11", provider="local", binary="mariadbd")
QUICK = scenario(profile="quick", threads=(2,), repetitions=1, warmup_s=1, time_s=3)
TIMING = ("qps", "p95_ms", "cpu_per_txn")


def planned(n_base: int, n_head: int = 1, *, cost: bool = True) -> list[Planned]:
    """The main job's family: timing (3 gating metrics) against a baseline of ``n_base``, and cost runs."""
    out = [Planned("point 2t time", QUICK, LOCAL, "time", "baseline", n_base, n_head, TIMING)]
    if cost:
        out.append(Planned("point 1t cost", QUICK, LOCAL, "cost", "baseline", 3, 3, ("instr_per_txn", "sys_fsync")))
    return out


def test_a_suggested_baseline_lets_the_gate_decide_with_as_many_runs():
    """A 1-run baseline makes the gate raise 1 repetition to 500; the suggested count (6) to 6."""
    tests = design_check.tests_of(planned(1))
    assert design.repetitions_needed(tests, 0.02) == 500
    m = baseline_runs(planned(1), 0.02, lambda p: p.kind == "time")
    assert m == 6
    assert design.repetitions_needed(design_check.tests_of(planned(m)), 0.02) == 6
    assert not design.attainable(design_check.tests_of(planned(5, 5)), 0.02).ok  # 5 would not do
    # a profile that runs more candidates than the floor keeps the floor: the baseline need not be larger
    assert baseline_runs(planned(1, 10), 0.02, lambda p: p.kind == "time") == design_check.MIN_BASELINE_RUNS


def test_a_raised_plan_says_its_time_before_it_starts():
    seen: list[int] = []

    def price(n: int) -> tuple[float, str]:
        seen.append(n)
        return 8.0 * n, "measured (5 runs) here"

    decision = check(planned(6), alpha=0.02, forced=False, price=price, limit=Limit(600.0))
    assert decision.repetitions == 6 and seen == [6]
    assert "running 6 repetitions instead of 1 (the whole plan: about 48 s, measured (5 runs) here)" in decision.note
    assert "\n" not in decision.note


def test_over_its_limit_it_stops_in_one_line_with_the_cheaper_ways():
    cheaper = ("cost runs only, add --cost", "record the timing baseline again: dbperf baseline record -s x")
    with pytest.raises(DesignError) as stopped:
        check(planned(1), alpha=0.02, forced=False, price=lambda n: (5.0 * n, "assumed"), limit=Limit(600.0, cheaper))
    line = str(stopped.value)
    assert "\n" not in line
    assert line.startswith("not started: ")
    assert "finding a regression needs 500 repetitions instead of 1, about 42 min (assumed), over the 10 min" in line
    assert "cheaper: cost runs only, add --cost; record the timing baseline again: dbperf baseline record" in line
    assert line.endswith("or pass --yes to run it")
    assert isinstance(stopped.value, ConfigError)  # exit 2
    # no limit (--yes, ci run, the pytest plugin): it runs, and says so
    assert check(planned(1), alpha=0.02, forced=False, price=lambda n: (5.0 * n, "assumed")).repetitions == 500


def test_a_design_that_can_never_fail_names_the_exact_recording():
    one_cost = [Planned("c", QUICK, LOCAL, "cost", "baseline", 1, 3, ("instr_per_txn",))]
    with pytest.raises(DesignError, match="cost metrics need at least 2 runs a side"):
        check(one_cost, alpha=0.02, forced=False)
    huge = [Planned(f"s{i} 2t time", QUICK, LOCAL, "time", "baseline", 1, 1, TIMING) for i in range(30)]
    hint = "dbperf baseline record --scenario s --server mariadb-local --profile quick --no-cost --repetitions 9"
    with pytest.raises(DesignError) as refused:
        check(huge, alpha=0.02, forced=False, record_hint=hint)
    assert str(refused.value).endswith(f"the stored baseline has only 1 run(s): record it again: {hint}")


def settings(tmp_path: Path, **flags: object):
    return resolve_settings(flags, root=REPO, environ={})


def test_the_suggested_recording_carries_what_the_gate_was_told(tmp_path: Path):
    given = settings(
        tmp_path,
        **{"baselines-dir": str(tmp_path / "b x"), "store": str(tmp_path / "s.duckdb"), "time": "2", "threads": "4"},
    )
    flags = advice.carried_flags(given)
    command = record_command(["oltp_point_select"], "mariadb-local", "quick", kind="time", repetitions=6, flags=flags)
    argv = shlex.split(command)
    assert argv[:3] == ["dbperf", "baseline", "record"]
    for pair in (
        ["--scenario", "oltp_point_select"],
        ["--profile", "quick"],
        ["--repetitions", "6"],
        ["--baselines-dir", str(tmp_path / "b x")],
        ["--store", str(tmp_path / "s.duckdb")],
        ["--time", "2"],
        ["--threads", "4"],
    ):
        i = argv.index(pair[0])
        assert argv[i : i + 2] == pair, command
    assert "--no-cost" in argv
    # dbperf's own parser takes it (an unknown option would raise)
    group = cli.make_context("dbperf", argv[1:])
    _, record, rest = cli.resolve_command(group, argv[1:])
    assert record is not None
    baseline = record.make_context("baseline", rest, parent=group)
    _, leaf, args = record.resolve_command(baseline, rest)  # type: ignore[attr-defined]
    leaf.make_context("record", args, parent=baseline)
    # defaults are not repeated; a cost recording has no --repetitions
    carried = advice.carried_flags(settings(tmp_path))
    plain = record_command(["a", "b"], "mariadb-local", "ci", kind="cost", flags=carried)
    assert plain == "dbperf baseline record --scenario a,b --server mariadb-local --profile ci --cost"


def test_no_baseline_hints_give_the_count_the_design_check_needs(tmp_path: Path):
    case = Case(LOCAL, QUICK)
    plan = advice.baseline_plan(settings(tmp_path), [case], ("time", "cost"), lambda *_: None)
    assert [(p.kind, p.n_base, found) for p, found in plan] == [("time", 1, None), ("cost", 3, None)]
    m = baseline_runs([p for p, _ in plan], 0.02, lambda p: p.kind == "time")
    hints = advice.record_hints(settings(tmp_path), [case], m)
    assert hints[("time", "oltp_point_select")].endswith("--profile quick --no-cost --repetitions 6")
    assert hints[("cost", "oltp_point_select")].endswith("--profile quick --cost")


def test_a_short_recording_says_what_the_gate_will_need(tmp_path: Path):
    case = Case(LOCAL, QUICK)
    (note,) = advice.too_few(settings(tmp_path), case, 1)
    assert note.startswith(
        "the timing baseline has 1 run(s) per thread count: a gate against it needs 499 "
    )  # the 499
    assert note.endswith("--profile quick --no-cost --repetitions 6")
    assert advice.too_few(settings(tmp_path), case, 6) == []


def test_max_minutes_and_yes_are_settings(tmp_path: Path):
    assert settings(tmp_path).raise_limit_s == 600
    assert resolve_settings({}, root=REPO, environ={"DBPERF_MAX_MINUTES": "2.5"}).raise_limit_s == 150
    assert resolve_settings({"yes": True}, root=REPO, environ={}).raise_limit_s is None
    assert resolve_settings({}, root=REPO, environ={"DBPERF_YES": "1"}).raise_limit_s is None
    for bad in ("0", "-1", "soon", "nan"):
        with pytest.raises(ConfigError, match="--max-minutes"):
            resolve_settings({"max-minutes": bad}, root=REPO, environ={})


def test_a_head_that_sets_what_the_base_runs_with_is_an_aa():
    point = scenario(threads=(2,))
    pinned = LOCAL.with_variables({"thread_cache_size": "64"})  # pinned by dbperf already
    assert same_settings(LOCAL, pinned, point)
    assert same_settings(LOCAL, LOCAL.with_variables({"Performance-Schema": "off"}), point)  # names, case
    assert not same_settings(LOCAL, LOCAL.with_variables({"thread_cache_size": "8"}), point)
    assert not same_settings(LOCAL, LOCAL.with_variables({"table_open_cache": "2000"}), point)
    other = Server(name="x", flavour="mariadb", version="11.8", provider="local", binary="mariadbd")
    assert not same_settings(LOCAL, other, point)


def test_the_cheaper_ways_name_cost_runs_and_the_exact_recording(tmp_path: Path):
    short = [(planned(1)[0], object())]  # a stored 1-run timing baseline
    hints = {("time", ""): "dbperf baseline record --scenario oltp_point_select --no-cost --repetitions 6"}
    both = advice.gate_cheaper(settings(tmp_path), short, hints, 6)  # type: ignore[arg-type]
    assert both == (
        "cost runs only, --cost (instructions decide small server-cost changes in 3 runs)",
        "record the timing baseline again with 6 runs (it has 1), after which a gate needs 6 at most: "
        + hints[("time", "")],
    )
    timing_only = advice.gate_cheaper(settings(tmp_path, cost=False), short, hints, 6)  # type: ignore[arg-type]
    assert timing_only[0].startswith("cost runs only, --cost instead of --no-cost")
    enough = [(planned(6)[0], object())]
    assert advice.gate_cheaper(settings(tmp_path, cost=True), enough, hints, 6) == ()  # type: ignore[arg-type]


def test_a_raised_plan_is_priced_per_run_with_its_source(tmp_path: Path):
    def stored(case: Case, kind: str, threads: int) -> tuple[float, str]:
        return (7.0, "measured (5 runs)") if kind == "time" else (20.0, "measured (3 runs)")

    pricing = advice.Pricing(stored, session_s=10.0, plan_check_s=6.0)  # type: ignore[arg-type]
    point = Case(LOCAL, QUICK)
    cost_runs = QUICK.cost.repetitions * len(QUICK.cost.threads)
    seconds, source = advice.price(settings(tmp_path), [point], 6, ("time", "cost"), pricing)
    assert (seconds, source) == (10.0 + 6 * 7.0 + cost_runs * 20.0, "measured (5 runs) here")
    seconds, source = advice.price(settings(tmp_path), [point, point], 7, ("time",), pricing, comparisons=1)
    assert seconds == 10.0 + 6.0 + 2 * 7 * 7.0
    seconds, source = advice.price(settings(tmp_path), [point], 6, ("time",), advice.Pricing())
    assert seconds == 10.0 + 6 * (1 + 3 + 1.5 + 2.0)  # warm-up + measured + a local start + storing it
    assert source == "assumed: warm-up + measured seconds + server start, from the profile"


def test_the_cli_hints_are_commands_that_run(tmp_path: Path):
    """`baseline show` on an empty folder and `compare --repetitions 1` suggest what works as printed."""
    from click.testing import CliRunner

    empty = tmp_path / "empty baselines"
    empty.mkdir()
    shown = CliRunner().invoke(cli, ["baseline", "show", "--baselines-dir", str(empty)])
    (hint,) = shown.output.split("e.g.: ")[1:]
    argv = shlex.split(hint.strip().rstrip(")"))
    assert argv[:3] == ["dbperf", "baseline", "record"] and argv[-2:] == ["--baselines-dir", str(empty)]
    group = cli.make_context("dbperf", argv[1:])
    _, record, rest = cli.resolve_command(group, argv[1:])
    assert record is not None
    baseline = record.make_context("baseline", rest, parent=group)
    _, leaf, args = record.resolve_command(baseline, rest)  # type: ignore[attr-defined]
    leaf.make_context("record", args, parent=baseline)  # parses
    compare = ["compare", "--base", "mariadb-local", "--head-var", "thread_cache_size=8", "-s", "oltp_point_select"]
    one = CliRunner().invoke(cli, [*compare, "--repetitions", "1", "--no-cost", "--store", str(tmp_path / "s.db")])
    assert isinstance(one.exception, ConfigError) and "leave --repetitions out" in str(one.exception)
