"""The pull-request comment, rebuilt in the trusted job from the verdicts' JSON of an untrusted run.

The A/B check runs a pull request's code, so everything it uploads is the pull request's to write. The
job that posts the comment (``pr-comment.yml``: the default branch's code, a token that may write
comments) therefore never posts Markdown from that run. It reads ``verdicts.json`` as data with the
one reader, :func:`harness.model.verdict_document.read_document` (the shape: types, fixed words, finite
numbers), keeps only what it can check, and renders the comment itself with
:func:`harness.report.comment.render_comment`:

* names (scenarios, servers, refs, versions) must match :data:`NAME`: letters, digits and ``._+:@/~-``,
  at most 100 characters, so no Markdown markup or HTML gets through. Such a name can still read as a
  mention (``x:@octocat``), an email or a link (``https://evil.example``, ``www.evil.example``), so the
  renderers print every name a pull request wrote inert: in a code span, or with a zero-width space
  after each ``@`` and ``#``, in ``://`` and after ``www`` (:func:`harness.report.mdtable.inert`). No
  mention, issue reference, link (but the run page) or HTML from the run gets into the comment or the
  check run's summary (``tests/unit/test_comment_inert.py`` renders both with GitHub's cmark-gfm);
* metrics, outcomes, causes, methods, modes and kinds must be ones dbperf knows;
* numbers must be finite, counts whole and in range;
* free text the run wrote (reasons, summaries, warnings) is dropped: the reason column is rebuilt from
  the cause and the numbers, and the run's warnings are only counted;
* the change under test (``changes``): the file must be a relative path under ``servers/`` or
  ``scenarios/`` (:data:`CHANGED_FILE`), lines whole numbers from 1, the status one dbperf writes; a
  setting's name and section are shown when they look like one (:data:`SETTING`, else ``?``), its
  values when they hold only :data:`VALUE`'s characters, at most 80 (else "not shown");
* the functions behind a cost change (``explanation``): names shown (in a code span) when they hold only
  :data:`FUNCTION`'s characters (C++ names: ``:<>,*&~`` and spaces; never a backtick, pipe or line
  break), else ``?``; instructions finite numbers, shares from -1 to 1;
* flame graphs (``flame_graphs``): file names only, each ``flamegraph-<scenario>-<threads>t.svg``;
* query plans (``plans``): table and key names must look like identifiers (else shown as ``?``), access
  types letters, rows finite numbers; a statement template is shown (in a code span) only when it holds
  nothing but SQL's words, ``?`` and operators; what changed is worked out again from the two plans.

Anything else refuses the whole file (a :class:`ReportError`, exit 2, nothing posted): a comment is
never half a forgery.

``dbperf ci comment`` runs it; so does ``python -m harness.report.trusted_comment``, which needs only
this module's few dependencies (:data:`DEPENDENCIES`), so the posting job installs those alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path
from typing import get_args

from harness.crash import EXIT_CRASH, crash_line
from harness.errors import ReportError
from harness.model import METRICS, DefinitionChange, MetricVerdict, ReadBack, Verdict
from harness.model.plan_changes import compare_statement
from harness.model.query_plan import PlanCheck, QueryPlan, TableAccess
from harness.model.verdict import UNSTEADY, Cause, TestMethod
from harness.model.verdict_document import Check, DocumentError, VerdictDocument, read_document
from harness.model.work import WORK
from harness.report.atomic_files import write_atomic
from harness.report.comment import LIMIT, Links, render_comment
from harness.report.forecast_sections import checked_forecast

#: The distributions this module imports (pr-comment.yml installs exactly these, hash-pinned).
DEPENDENCIES = (
    *("annotated-types", "markdown-it-py", "mdurl", "numpy", "pydantic", "pydantic-core", "pygments", "rich"),
    *("scipy", "typing-extensions", "typing-inspection"),
)
#: What a name may look like: a scenario, a server, a git ref or commit, a server version.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+:@/~-]{0,99}")
#: A commit id, and the run page the comment links to (built by the workflow from trusted values).
SHA = re.compile(r"[0-9a-f]{7,40}")
#: A differential flame graph's file name in the artifact (``flamegraph-<scenario>-<threads>t.svg``).
FLAME_GRAPH = re.compile(r"flamegraph-[A-Za-z0-9][A-Za-z0-9._+-]{0,99}-[0-9]{1,5}t\.svg")
RUN_URL = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/actions/runs/[0-9]{1,20}")
#: More than this many verdicts is not a comment a pull request can produce (catalogue x threads x kinds).
MAX_VERDICTS = 2000
#: Plans: a table or key name as EXPLAIN prints it (``<subquery2>`` too), an access type, a template
#: (literals already folded to ``?``; no backtick, pipe or line break, as it goes in a code span).
IDENT = re.compile(r"<?[A-Za-z0-9_$#@.-]{1,64}>?")
ACCESS = re.compile(r"[A-Za-z_]{0,40}")
TEMPLATE = re.compile(r"[A-Za-z0-9_#?*(),.=<>!+/%: -]{1,300}")
MAX_STATEMENTS = 200
#: The change under test: a file under servers/ or scenarios/ (no ``..``, no absolute path), a setting's
#: or section's name, a value (anything else is not shown), and at most this many changes.
CHANGED_FILE = re.compile(r"(?:servers|scenarios)(?:/(?!\.\.?(?:/|$))[A-Za-z0-9_.+-]{1,100}){1,6}")
SETTING = re.compile(r"[A-Za-z0-9_.-]{1,64}")
VALUE = re.compile(r"[A-Za-z0-9_.,:/+@%=-]{1,80}")
MAX_CHANGES = 500
#: A function name as the cost profile keys it (parameters dropped), and at most this many per comparison.
FUNCTION = re.compile(r"[A-Za-z0-9_:<>,*&~ ().\[\]$@'+=!/%^#-]{1,200}")
MAX_FUNCTIONS = 64
MAX_TABLES = 64
_CAUSES = frozenset(get_args(Cause)) | {"", UNSTEADY}
_METHODS = frozenset(get_args(TestMethod)) | {""}
_WHY = {
    "regression": "a real change, beyond the minimum effect{bound}",
    "improvement": "a real change, beyond the minimum effect{bound}",
    "pass": "rules out a harmful change as large as the minimum effect{bound}",
    "multiplicity": "significant alone, not across every test of the check (Holm)",
    "significance": "not significant",
    "small": "a real change, smaller than the minimum effect{bound}",
    "repetitions": "too few repetitions to decide",
    "noise": "too noisy to decide",
    "not-deterministic": "the counts of one side differ: cost mode cannot judge it",
    "one-run": "one run per side: no verdict",
    UNSTEADY: "the window was shorter than 5 x p95: not a steady state, not decided",
    "": "see the full report",
}


def _fail(where: str, problem: str) -> ReportError:
    return ReportError(f"verdicts file refused ({where}: {problem}); nothing is posted")


def _name(value: str, where: str, *, empty: bool = False) -> str:
    if not (value == "" and empty) and not NAME.fullmatch(value):
        raise _fail(where, f"not a name dbperf writes: {value[:40]!r}")
    return value


def _choice(value: str, allowed: frozenset[str], where: str) -> str:
    if value not in allowed:
        raise _fail(where, f"unknown value {value[:40]!r}")
    return value


def _count(value: int | None, where: str, *, high: int = 1_000_000) -> None:
    if value is not None and not 0 <= value <= high:
        raise _fail(where, f"not a whole number from 0 to {high:,}: {value!r}")


def _at_most(items: tuple[object, ...], high: int, where: str, what: str) -> None:
    if len(items) > high:
        raise _fail(where, f"a list of at most {high} {what} is expected")


def _shown(value: str, pattern: re.Pattern[str]) -> str:
    """A name the run wrote when it looks like one, else ``?`` (dropped like free text)."""
    return value if pattern.fullmatch(value) else "?"


def _value(value: str) -> str:
    """A setting's value when it looks like one; "" (not shown) otherwise."""
    return value if value == "" or VALUE.fullmatch(value) else "(not shown)"


def _why(outcome: str, cause: str, bound_pct: float | None) -> str:
    if outcome == "failed":
        return "a run failed: see the full report"
    if outcome == "no_baseline":
        return "no baseline to judge by"
    bound = f" ({abs(bound_pct):.1f} %)" if bound_pct is not None else ""
    return _WHY[cause].format(bound=bound)


def _metric(mv: MetricVerdict, where: str) -> MetricVerdict:
    _choice(mv.metric, frozenset(METRICS) | frozenset(WORK) | {"run", "baseline"}, f"{where}.metric")
    _choice(mv.cause, _CAUSES, f"{where}.cause")
    _choice(mv.method, _METHODS, f"{where}.method")
    for name in ("n_base", "n_head", "repetitions_needed"):
        _count(getattr(mv, name), f"{where}.{name}")
    if not 0.5 <= mv.level < 1.0:
        raise _fail(f"{where}.level", f"not a confidence level from 0.5 to 1: {mv.level!r}")
    why = _why(mv.outcome, mv.cause, mv.bound_pct)
    return dataclasses.replace(mv, reason=why, summary=why, family_size=0, backend="")


def _verdict(v: Verdict, where: str) -> Verdict:
    if not 1 <= len(v.metrics) <= len(METRICS) + len(WORK):
        raise _fail(f"{where}.metrics", f"a list of 1 to {len(METRICS) + len(WORK)} metric verdicts is expected")
    _at_most(v.explanation, MAX_FUNCTIONS, f"{where}.explanation", "functions")
    _at_most(v.read_back, MAX_CHANGES, f"{where}.read_back", "settings")
    _at_most(v.curves, MAX_VERDICTS, f"{where}.curves", "sweeps")
    for name in ("scenario", "base", "head", "base_version", "head_version"):
        _name(getattr(v, name), f"{where}.{name}", empty=name.endswith("_version"))
    _count(v.threads, f"{where}.threads", high=100_000)
    for i, curve in enumerate(v.curves):
        _at_most(curve.points, 64, f"{where}.curves[{i}].points", "points")
        _count(curve.pair, f"{where}.curves[{i}].pair")
        _count(curve.knee, f"{where}.curves[{i}].knee", high=100_000)
        for j, point in enumerate(curve.points):
            _count(point.threads, f"{where}.curves[{i}].points[{j}].threads", high=100_000)
    for i, d in enumerate(v.explanation):
        if not -1.0 - 1e-9 <= d.share <= 1.0 + 1e-9:
            raise _fail(f"{where}.explanation[{i}].share", f"not a share from -1 to 1: {d.share!r}")
    try:  # numbers and fixed words only (docs/forecast.md)
        forecast = checked_forecast(v.forecast, f"{where}.forecast")
    except ValueError as exc:
        raise _fail(f"{where}.forecast", f"not a forecast dbperf writes ({exc})") from None
    return dataclasses.replace(
        v,
        metrics=tuple(_metric(m, f"{where}.metrics[{i}]") for i, m in enumerate(v.metrics)),
        warnings=(),
        explanation=tuple(dataclasses.replace(d, name=_shown(d.name, FUNCTION)) for d in v.explanation),
        read_back=tuple(
            ReadBack(r.side, _shown(r.name, SETTING), _value(r.requested), _value(r.effective)) for r in v.read_back
        ),
        forecast=forecast,
    )


def _change(c: DefinitionChange, where: str) -> DefinitionChange:
    if not CHANGED_FILE.fullmatch(c.file):
        raise _fail(f"{where}.file", f"not a file under servers/ or scenarios/: {c.file[:40]!r}")
    _count(c.line, f"{where}.line")
    for name in ("base", "head", "scenario"):
        _name(getattr(c, name), f"{where}.{name}", empty=True)
    return dataclasses.replace(
        c,
        name=_shown(c.name, SETTING),
        old=_value(c.old),
        new=_value(c.new),
        line=c.line or None,
        section="" if c.section == "" else _shown(c.section, SETTING),
    )


def _plan(plan: QueryPlan | None, where: str) -> QueryPlan | str:
    if plan is None:
        return "EXPLAIN refused: see the full report"
    _at_most(plan.tables, MAX_TABLES, f"{where}.tables", "tables")
    tables = tuple(
        TableAccess(
            table=_shown(t.table, IDENT),
            access_type=t.access_type if ACCESS.fullmatch(t.access_type) else "?",
            key="" if t.key == "" else _shown(t.key, IDENT),
            rows=t.rows,
        )
        for t in plan.tables
    )
    return dataclasses.replace(plan, tables=tables)


def _plan_check(check: PlanCheck, where: str) -> PlanCheck:
    _at_most(check.statements, MAX_STATEMENTS, f"{where}.statements", "statements")
    statements = []
    for j, s in enumerate(check.statements):
        at = f"{where}.statements[{j}]"
        template = _shown(s.template, TEMPLATE)
        template = "(statement not shown: see the full report)" if template == "?" else template
        statements.append(compare_statement(template, "", _plan(s.base, f"{at}.base"), _plan(s.head, f"{at}.head")))
    return PlanCheck(
        scenario=_name(check.scenario, f"{where}.scenario"),
        base=_name(check.base, f"{where}.base"),
        head=_name(check.head, f"{where}.head"),
        statements=tuple(statements),
        note="not compared: see the full report" if check.note else "",
    )


def load_document(text: str) -> tuple[VerdictDocument, int]:
    """The checked document of a ``verdicts.json`` (read once by :func:`harness.model.verdict_document.read_document`,
    then every name, path and count checked and the run's free text dropped), and how many warnings it had."""
    try:
        doc = read_document(text)
    except DocumentError as exc:
        raise ReportError(f"verdicts file refused ({exc}); nothing is posted") from None
    _at_most(doc.verdicts, MAX_VERDICTS, "verdicts", "verdicts")
    _at_most(doc.changes, MAX_CHANGES, "changes", "changes")
    _at_most(doc.plans, MAX_VERDICTS, "plans", "plan checks")
    _at_most(doc.flame_graphs, MAX_VERDICTS, "flame_graphs", "file names")
    for i, name in enumerate(doc.flame_graphs):
        if not FLAME_GRAPH.fullmatch(name):
            raise _fail(f"flame_graphs[{i}]", "not a flame graph's file name (flamegraph-SCENARIO-Nt.svg)")
    checked = VerdictDocument(
        verdicts=tuple(_verdict(v, f"verdicts[{i}]") for i, v in enumerate(doc.verdicts)),
        changes=tuple(_change(c, f"changes[{i}]") for i, c in enumerate(doc.changes)),
        plans=tuple(_plan_check(p, f"plans[{i}]") for i, p in enumerate(doc.plans)),
        flame_graphs=doc.flame_graphs,
    )
    return checked, sum(len(v.warnings) for v in doc.verdicts)


def build_comment(text: str, *, sha: str = "", run_url: str = "", limit: int = LIMIT) -> str:
    """The comment's Markdown from a verdicts document (see the module docstring)."""
    if sha and not SHA.fullmatch(sha):
        raise _fail("--sha", "not a commit id")
    if run_url and not RUN_URL.fullmatch(run_url):
        raise _fail("--run-url", "not a GitHub Actions run page")
    doc, warnings = load_document(text)
    notes = [f"the run wrote {warnings} warning(s): see the full report"] if warnings else []
    footer = f"head {sha[:12]}; rebuilt from verdicts.json by the trusted comment job" if sha else ""
    check = Check(doc, title="dbperf performance check", warnings=tuple(notes))
    return render_comment(check, links=Links(run_url=run_url), footer=footer, limit=limit)


def write_comment(verdicts: Path, *, sha: str = "", run_url: str = "", out: Path | None = None) -> str:
    """Read a verdicts file, build the comment, write it to ``out`` (or return it only)."""
    try:
        text = verdicts.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read {verdicts}: {exc}; give the verdicts.json of the run") from None
    markdown = build_comment(text, sha=sha, run_url=run_url)
    if out is not None:
        write_atomic(out, markdown)  # whole or not at all (harness.report.atomic_files)
    return markdown


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.report.trusted_comment VERDICTS [--sha] [--run-url] [--out]``: ``dbperf ci comment``
    for the posting job, without the rest of dbperf's dependencies."""
    parser = argparse.ArgumentParser(prog="python -m harness.report.trusted_comment", description=main.__doc__)
    parser.add_argument("verdicts", type=Path)
    parser.add_argument("--sha", default="")
    parser.add_argument("--run-url", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    try:
        markdown = write_comment(args.verdicts, sha=args.sha, run_url=args.run_url, out=args.out)
    except ReportError as exc:
        print(f"dbperf: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the last resort: a bug, in one line (harness.crash)
        print(crash_line(exc, parser.prog), file=sys.stderr)
        return EXIT_CRASH
    if args.out is None:
        sys.stdout.write(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
