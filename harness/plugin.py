"""pytest plugin: ``pytest scenarios/ -k point_select`` runs pinned scenarios on real servers.

Registered through the ``pytest11`` entry point, so ``pytest scenarios/`` just works. It adds one
option family, ``--dbperf-*``, generated from the same definitions as the ``dbperf`` CLI's options
(:data:`harness.config.option_table.OPTIONS`), and parametrizes any test that asks for the ``dbperf_case`` fixture
with one timing case per scenario x server x thread count and one cost case per scenario x server.
Test ids name them (``test_scenario[oltp_point_select-mariadb-local-2t]``,
``test_scenario[oltp_point_select-mariadb-local-cost]``) so ``-k`` selects on each.

The cases come from :func:`harness.pipeline.cases.scenario_cases`. Each runs its repetitions on fresh
servers, stores every run, and is judged through :func:`harness.pipeline.gate` against its baseline:
timing against this testbed's, cost against the committed cost baseline. The test's result follows the
outcome's exit code, as ``dbperf gate``'s would: exit 2 (a failed run, runs the store could not take)
is a pytest error, exit 1 (a regression) a failure with the evidence, and a case nothing was judged for
(no comparable baseline) a skip that says how to record one, before anything is measured
(:mod:`harness.pipeline.judgeable`); each in one line, no traceback, also
in the short test summary (``FAILED <id> - PerformanceRegression: ...``) and when the harness stops
the case (a malformed baseline, a refused design: :class:`~harness.errors.HarnessError`). Progress
and notes go to the terminal as they happen, not into the captured output. The design is checked
before running, as for ``dbperf gate``. The session ends with a summary table of every run, the
verdicts, and the notes the measurements made. When every failure was such an error, pytest exits 2,
not 1 (a regression's code); an exception dbperf did not expect is a bug said in one line
(:mod:`harness.crash`). ``--lf`` after a session of scenarios with no failure selects none of them. A
session of more than one case says its expected wall time first (:mod:`harness.pipeline.estimates`).
"""

from __future__ import annotations

import dataclasses
import io
import os
import shlex
from dataclasses import dataclass, field
from typing import Any

import pytest

from harness import pipeline
from harness.config.option_table import OPTIONS
from harness.config.settings import Settings, resolve_settings
from harness.crash import crash_line
from harness.errors import HarnessError, InconclusiveVerdict, PerformanceRegression
from harness.measure.session import QuietReporter, Reporter, Session
from harness.model import EXIT_ERROR, EXIT_REGRESSION, IntervalSample, Outcome, RunResult, Verdict
from harness.pipeline.cases import ScenarioCase, scenario_cases

_RUNS_KEY = pytest.StashKey[list[RunResult]]()
_VERDICTS_KEY = pytest.StashKey[list[Verdict]]()
_NOTES_KEY = pytest.StashKey[list[str]]()


class NoticeReporter:
    """Progress through pytest's terminal as it happens (output capture suspended for the line, so it
    is not replayed under a failure); notes and warnings always.

    A note is how the design check says, before any run, that the planned repetitions could never
    reach significance and how many it runs instead (or which settings would).
    """

    def __init__(self, terminal: Any, *, progress: bool, capture: Any = None) -> None:
        self.terminal = terminal
        self.progress = progress
        self.capture = capture  # pytest's capture manager (None: write through whatever captures)

    def _line(self, text: str) -> None:
        if self.capture is None:
            self.terminal.write_line(text)
            return
        with self.capture.global_and_fixture_disabled():
            self.terminal.ensure_newline()
            self.terminal.write_line(text)

    def phase(self, message: str) -> None:
        if self.progress or message.startswith(("note", "warning")):
            self._line(f"dbperf: {message}")

    def interval(self, label: str, sample: IntervalSample) -> None:
        del label, sample

    def finished(self, run: RunResult) -> None:
        if self.progress:
            state = f"qps {run.metrics.qps:,.0f}" if run.ok and run.metrics.qps else run.status
            self._line(f"dbperf: {run.server} {run.scenario} {run.threads}t #{run.repetition}: {state}")


class CaseFailed(pytest.fail.Exception):  # type: ignore[name-defined,misc]
    """A scenario case that errored or failed, said in one line (see :func:`pytest_runtest_makereport`),
    with the exit code ``dbperf gate`` would have given it (2 an error, 1 a regression)."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message, pytrace=False)
        self.exit_code = exit_code


_EXIT_PROPERTY = "dbperf_exit_code"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A case's failure or error is its one-line message, in the failure section and in the short summary.

    pytest keeps no crash line for ``pytrace=False`` failures, so its short summary would name the test
    without the reason; a string report is printed as it is in both places (and crosses xdist as it is).
    """
    report = yield
    if call.excinfo is not None and isinstance(call.excinfo.value, CaseFailed):
        report.longrepr = str(call.excinfo.value.msg)
        report.user_properties.append((_EXIT_PROPERTY, call.excinfo.value.exit_code))  # crosses xdist
    return report


class ExitCodes:
    """Exit as ``dbperf gate`` would: 2 when every failure is a case that could not be measured or
    judged (a harness error, a store that refused its runs, a bug in dbperf), so a broken setup never
    reads as exit 1, a regression. The reports carry each case's code (across xdist too)."""

    def __init__(self) -> None:
        self.failed = 0
        self.errors = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failed += 1
            self.errors += (_EXIT_PROPERTY, EXIT_ERROR) in report.user_properties

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus == pytest.ExitCode.TESTS_FAILED and self.failed and self.failed == self.errors:
            session.exitstatus = EXIT_ERROR


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(ExitCodes(), "dbperf-exit-codes")


_LFNF = ("--lfnf", "--last-failed-no-failures")


def _lfnf_given(config: pytest.Config) -> bool:
    """Whether the user chose ``--last-failed-no-failures`` (command line, PYTEST_ADDOPTS or addopts)."""
    args = [*map(str, config.invocation_params.args), *shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))]
    args += [str(a) for a in config.getini("addopts")]
    return any(a.startswith(_LFNF) for a in args)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--lf`` after a scenario session with no failure selects no scenario, not all of them.

    pytest's default (``--last-failed-no-failures all``) reruns every test when none failed: after a
    session whose cases were all skipped (nothing to judge against) or passed, ``pytest scenarios/ --lf``
    would measure the whole catalogue again. A session of scenario cases only takes ``none`` instead,
    unless the user chose; pytest's cache plugin applies it after this hook (it wraps it)."""
    if not config.getoption("lf", False) or _lfnf_given(config):
        return
    if items and all(_case(item) is not None for item in items):
        config.option.last_failed_no_failures = "none"


def pytest_collection_finish(session: pytest.Session) -> None:
    """Before the first case runs: each case with nothing to judge against, in one line with the command
    that records its baseline (it is skipped without measuring: :mod:`harness.pipeline.judgeable`), and,
    for a session of more than one case, the expected wall time of the rest (said over a minute;
    :mod:`harness.pipeline.estimates`)."""
    cases = [c for c in map(_case, session.items) if c is not None]
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    if not cases or terminal is None or hasattr(session.config, "workerinput"):
        return
    from harness.pipeline import estimates, judgeable

    settings = settings_from_config(session.config)
    try:
        unjudged = (
            [] if settings.measure_unjudged else judgeable.of_session(settings, [(c.measured(), c.kind) for c in cases])
        )
    except HarnessError:  # a malformed baseline, no sysbench: each case says so in its own line
        unjudged = []
    skipped = {(u.scenario.name, u.server.name, u.kind, t) for u in unjudged for t in u.threads}
    for u in unjudged:
        terminal.write_line(f"dbperf: {u.line()} (skipped without measuring)")
    left = [c for c in cases if (c.scenario.name, c.case.server.name, c.kind, c.threads) not in skipped]
    if len(cases) < 2 or not left:
        return
    work = [
        estimates.Work(
            c.measured(), c.kind, c.scenario.repetitions if c.kind == "time" else c.scenario.cost.repetitions
        )
        for c in left
    ]
    found = estimates.of_work(settings, work, estimates.recent_history(settings.store))
    if found.seconds >= estimates.SAY_ABOVE_S:
        terminal.write_line(f"dbperf: {estimates.line(found)} for {len(left)} scenario case(s)")


def _case(item: pytest.Item) -> ScenarioCase | None:
    """The scenario case a test item runs (None: not a scenario test)."""
    callspec = getattr(item, "callspec", None)
    found = callspec.params.get("dbperf_case") if callspec is not None else None
    return found if isinstance(found, ScenarioCase) else None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dbperf", "dbperf: database performance scenarios")
    for spec in OPTIONS:
        default = f"; default {spec.default}" if spec.default else ""
        if spec.kind == "switch":
            for value, prefix in ((True, ""), (False, "no-")):
                group.addoption(
                    f"--dbperf-{prefix}{spec.name}",
                    dest=f"dbperf_{spec.dest}",
                    action="store_const",
                    const=value,
                    default=None,
                    help=f"{spec.help} (env {spec.env_var})" if value else f"see --dbperf-{spec.name}",
                )
            continue
        if spec.kind == "flag":
            group.addoption(
                f"--dbperf-{spec.name}",
                dest=f"dbperf_{spec.dest}",
                action="store_true",
                default=False,
                help=f"{spec.help} (env {spec.env_var})",
            )
            continue
        group.addoption(
            f"--dbperf-{spec.name}",
            dest=f"dbperf_{spec.dest}",
            action="append" if spec.kind == "list" else "store",
            default=None,
            metavar=spec.metavar or spec.name.split("-")[-1].upper(),
            help=f"{spec.help} (env {spec.env_var}{default})",
        )


def settings_from_config(config: pytest.Config) -> Settings:
    flags: dict[str, object | None] = {spec.name: config.getoption(f"dbperf_{spec.dest}") for spec in OPTIONS}
    return resolve_settings(flags, root=None if not config.rootpath else config.rootpath)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "dbperf_case" not in metafunc.fixturenames:
        return
    try:
        cases = scenario_cases(settings_from_config(metafunc.config))
    except HarnessError as exc:
        raise pytest.UsageError(f"dbperf: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the last resort: a bug, in one line (harness.crash)
        raise pytest.UsageError(crash_line(exc)) from None
    metafunc.parametrize("dbperf_case", cases, ids=[c.id for c in cases])


@pytest.fixture(scope="session")
def dbperf_settings(pytestconfig: pytest.Config) -> Settings:
    """The resolved settings of this session (flag > env > pyproject > defaults)."""
    return settings_from_config(pytestconfig)


@dataclass
class Runner:
    """Runs cases within one pytest session, sharing the dataset snapshots and the store."""

    settings: Settings
    config: pytest.Config
    _sessions: dict[bool, Session] = field(default_factory=dict)

    def _reporter(self) -> Reporter:
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        quiet = os.environ.get("DBPERF_PROGRESS", "1") == "0"
        if terminal is None:
            return QuietReporter()
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        return NoticeReporter(terminal, progress=not quiet, capture=capture)

    def run_case(self, case: ScenarioCase) -> Outcome:
        """Measure the case's repetitions and judge them against this testbed's baseline."""
        settings = dataclasses.replace(self.settings, cost=case.kind == "cost")
        containers = case.case.server.provider == "container"
        if containers not in self._sessions:
            self._sessions[containers] = pipeline.open_session(self.settings, self._reporter(), containers=containers)
        session = self._sessions[containers]
        outcome = pipeline.gate(
            settings,
            [case.measured()],
            session.reporter,
            pipeline.JudgeOptions(alpha=self.settings.alpha, strict=self.settings.strict),
            session=session,
            label="pytest",
        )
        self.config.stash.setdefault(_RUNS_KEY, []).extend(outcome.runs)
        self.config.stash.setdefault(_VERDICTS_KEY, []).extend(outcome.verdicts)
        notes = self.config.stash.setdefault(_NOTES_KEY, [])
        notes.extend(f"{case.id}: {w}" for w in outcome.warnings if f"{case.id}: {w}" not in notes)
        return outcome

    def check(self, case: ScenarioCase, outcome: Outcome) -> None:
        """The test's result from the outcome, as ``dbperf gate``'s exit code decides it.

        Exit 2 (a failed run, runs the store could not take) errors, exit 1 (a regression, or an
        inconclusive verdict under ``--dbperf-strict``) fails with the evidence, and a case nothing was
        judged for (no comparable baseline) is skipped with the reason; each with a one-line message.
        """
        if outcome.exit_code == EXIT_ERROR or outcome.error:
            raise CaseFailed(f"{case.id}: {_error_line(outcome)}")
        if outcome.exit_code == EXIT_REGRESSION:
            raise CaseFailed(_failure(case, outcome, strict=self.settings.strict), EXIT_REGRESSION)
        judged = [m for v in outcome.verdicts for m in v.metrics if m.outcome in _JUDGED]
        if not judged:
            reasons = dict.fromkeys(m.reason for v in outcome.verdicts for m in v.metrics) or {"no verdict": None}
            pytest.skip(f"{case.id}: nothing judged: {'; '.join(reasons)}")


_JUDGED = ("pass", "regression", "improvement", "inconclusive")
_KIND_WORD = {"time": "timing", "cost": "cost"}


def _error_line(outcome: Outcome) -> str:
    failed = [r for r in outcome.runs if not r.ok]
    if failed:
        return f"run {failed[0].run_id} failed: {failed[0].failure}"
    return outcome.error or "error (exit 2)"


def _failure(case: ScenarioCase, outcome: Outcome, *, strict: bool) -> str:
    """One line: ``PerformanceRegression: <case>: <metric's reason>; <next metric's reason>``.

    The verdicts' notes (a configuration that differs from the baseline's, the command that records
    it again) are in the session's summary, with the verdict table."""
    parts: list[str] = []
    kinds: set[str] = set()
    for verdict in outcome.verdicts:
        regressions = [m for m in verdict.metrics if m.gating and m.outcome == "regression"]
        bad = regressions or [m for m in verdict.metrics if strict and m.gating and m.outcome == "inconclusive"]
        kinds.update(m.outcome for m in bad)
        parts += [f"{_unprefixed(m.reason)} (against the {_KIND_WORD[verdict.kind]} baseline)" for m in bad]
    name = PerformanceRegression.__name__ if "regression" in kinds else InconclusiveVerdict.__name__
    what = "" if "regression" in kinds else "inconclusive (--dbperf-strict): "
    return f"{name}: {case.id}: {what}{'; '.join(parts) or 'regression'}"


def _unprefixed(reason: str) -> str:
    """A metric's reason without its outcome word (``Regression: QPS -30 %...`` -> ``QPS -30 %...``)."""
    word, sep, rest = reason.partition(": ")
    return rest.rstrip(".") if sep and word in ("Regression", "Inconclusive") else reason.rstrip(".")


@pytest.fixture
def dbperf_outcome(dbperf_case: ScenarioCase, dbperf_runner: Runner) -> Outcome:
    """The case measured and judged; a case that cannot be (exit 2) errors here, in one line."""
    try:
        outcome = dbperf_runner.run_case(dbperf_case)
    except HarnessError as exc:  # a malformed baseline, a refused design, no Docker engine: one line
        raise CaseFailed(f"{dbperf_case.id}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the last resort: a bug, in one line (harness.crash)
        raise CaseFailed(f"{dbperf_case.id}: {crash_line(exc)}") from None
    if outcome.exit_code == EXIT_ERROR or outcome.error:
        raise CaseFailed(f"{dbperf_case.id}: {_error_line(outcome)}")
    return outcome


@pytest.fixture(scope="session")
def dbperf_runner(pytestconfig: pytest.Config, dbperf_settings: Settings) -> Runner:
    """Runs scenario cases; every run is stored in the configured store."""
    return Runner(dbperf_settings, pytestconfig)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    del exitstatus
    runs = config.stash.get(_RUNS_KEY, [])
    if not runs:
        return
    from harness.model.verdict_document import VerdictDocument
    from harness.report.terminal import print_summary
    from harness.report.verdicts import print_document

    terminalreporter.section("dbperf summary")
    buffer = io.StringIO()
    print_summary(runs, buffer)
    verdicts = config.stash.get(_VERDICTS_KEY, [])
    if verdicts:
        print_document(VerdictDocument(tuple(verdicts)), buffer)
    for line in buffer.getvalue().splitlines():
        terminalreporter.write_line(line)
    for verdict in verdicts:
        for metric in verdict.metrics:
            if metric.outcome == "no_baseline":
                terminalreporter.write_line(f"dbperf: {verdict.scenario} {verdict.threads}t: {metric.reason}")
    notes = dict.fromkeys(note for run in runs for note in run.notes)
    for note in notes:
        terminalreporter.write_line(f"dbperf: note: {note}")
    for line in config.stash.get(_NOTES_KEY, []):
        terminalreporter.write_line(f"dbperf: note: {line}")
