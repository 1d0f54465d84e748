"""The pull-request comment, rebuilt in the trusted job from the verdicts' JSON of an untrusted run.

The A/B check runs a pull request's code, so everything it uploads is the pull request's to write. The
job that posts the comment (``pr-comment.yml``: the default branch's code, a token that may write
comments) therefore never posts Markdown from that run. It reads ``verdicts.json`` as data, keeps
only what it can check, and renders the comment itself with :func:`harness.report.comment.render_comment`:

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
import json
import math
import re
import sys
from pathlib import Path
from typing import get_args

from harness import bounded_json
from harness.crash import EXIT_CRASH, crash_line
from harness.errors import ReportError
from harness.model import (
    METRICS,
    ChangeStatus,
    DefinitionChange,
    FunctionDelta,
    MetricVerdict,
    ReadBack,
    SweepCurve,
    SweepPoint,
    Verdict,
    VerdictOutcome,
)
from harness.model.outcome import DOCUMENT_FORMAT
from harness.model.plan_changes import compare_statement
from harness.model.query_plan import PlanCheck, QueryPlan, StatementPlans, TableAccess
from harness.model.verdict import UNSTEADY, Cause, TestMethod
from harness.model.work import WORK
from harness.report.atomic_files import write_atomic
from harness.report.comment import LIMIT, Links, render_comment

#: The distributions this module imports (pr-comment.yml installs exactly these, hash-pinned).
DEPENDENCIES = ("markdown-it-py", "mdurl", "numpy", "pygments", "rich", "scipy")
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
_STATUSES = frozenset(get_args(ChangeStatus))
MAX_TABLES = 64
_OUTCOMES = frozenset(get_args(VerdictOutcome))
_CAUSES = frozenset(get_args(Cause)) | {"", UNSTEADY}
_METHODS = frozenset(get_args(TestMethod)) | {""}
_METRIC_FIELDS_FLOAT = (
    "base_median",
    "head_median",
    "estimate_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "p_adjusted",
    "bound_pct",
    "noise_pct",
    "seconds_needed",
    "confidence",
    "level",
)

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


def _name(value: object, where: str, *, empty: bool = False) -> str:
    if value in ("", None) and empty:
        return ""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise _fail(where, f"not a name dbperf writes: {str(value)[:40]!r}")
    return value


def _choice(value: object, allowed: frozenset[str], where: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise _fail(where, f"unknown value {str(value)[:40]!r}")
    return value


def _number(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(where, f"not a finite number: {str(value)[:40]!r}")
    return float(value)


def _count(value: object, where: str, *, high: int = 1_000_000, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise _fail(where, f"not a whole number from 0 to {high:,}: {str(value)[:40]!r}")
    return value


def _why(outcome: str, cause: str, bound_pct: float | None) -> str:
    if outcome == "failed":
        return "a run failed: see the full report"
    if outcome == "no_baseline":
        return "no baseline to judge by"
    bound = f" ({abs(bound_pct):.1f} %)" if bound_pct is not None else ""
    return _WHY[cause].format(bound=bound)


def _metric(raw: object, where: str) -> MetricVerdict:
    if not isinstance(raw, dict):
        raise _fail(where, "not an object")
    metric = _choice(raw.get("metric"), frozenset(METRICS) | frozenset(WORK) | {"run", "baseline"}, f"{where}.metric")
    outcome = _choice(raw.get("outcome"), _OUTCOMES, f"{where}.outcome")
    cause = _choice(raw.get("cause", ""), _CAUSES, f"{where}.cause")
    numbers = {f: _number(raw.get(f), f"{where}.{f}") for f in _METRIC_FIELDS_FLOAT}
    why = _why(outcome, cause, numbers["bound_pct"])
    higher_is_worse = raw.get("higher_is_worse")
    gating = raw.get("gating", True)
    if not isinstance(higher_is_worse, bool) or not isinstance(gating, bool):
        raise _fail(where, "higher_is_worse and gating must be true or false")
    return MetricVerdict(
        metric=metric,
        higher_is_worse=higher_is_worse,
        outcome=outcome,  # type: ignore[arg-type]  # checked against VerdictOutcome above
        reason=why,
        summary=why,
        cause=cause,
        method=_choice(raw.get("method", ""), _METHODS, f"{where}.method"),
        n_base=_count(raw.get("n_base", 0), f"{where}.n_base") or 0,
        n_head=_count(raw.get("n_head", 0), f"{where}.n_head") or 0,
        repetitions_needed=_count(raw.get("repetitions_needed"), f"{where}.repetitions_needed", optional=True),
        gating=gating,
        base_median=numbers["base_median"],
        head_median=numbers["head_median"],
        estimate_pct=numbers["estimate_pct"],
        ci_low_pct=numbers["ci_low_pct"],
        ci_high_pct=numbers["ci_high_pct"],
        p_value=numbers["p_value"],
        p_adjusted=numbers["p_adjusted"],
        bound_pct=numbers["bound_pct"],
        noise_pct=numbers["noise_pct"],
        seconds_needed=numbers["seconds_needed"],
        confidence=numbers["confidence"],
        level=_level(numbers["level"], f"{where}.level"),
    )


def _level(value: float | None, where: str) -> float:
    """The level an interval was asked for (95 % in a file from before it was written): from 0.5 to 1."""
    if value is None:
        return 0.95
    if not 0.5 <= value < 1.0:
        raise _fail(where, f"not a confidence level from 0.5 to 1: {value!r}")
    return value


def _verdict(raw: object, where: str) -> Verdict:
    if not isinstance(raw, dict):
        raise _fail(where, "not an object")
    metrics = raw.get("metrics")
    if not isinstance(metrics, list) or not 1 <= len(metrics) <= len(METRICS) + len(WORK):
        raise _fail(f"{where}.metrics", f"a list of 1 to {len(METRICS) + len(WORK)} metric verdicts is expected")
    warnings = raw.get("warnings", [])
    if not isinstance(warnings, list):
        raise _fail(f"{where}.warnings", "not a list")
    explanation = raw.get("explanation", [])
    if not isinstance(explanation, list) or len(explanation) > MAX_FUNCTIONS:
        raise _fail(f"{where}.explanation", f"a list of at most {MAX_FUNCTIONS} functions is expected")
    return Verdict(
        mode=_choice(raw.get("mode"), frozenset({"ab", "baseline"}), f"{where}.mode"),  # type: ignore[arg-type]
        scenario=_name(raw.get("scenario"), f"{where}.scenario"),
        threads=_count(raw.get("threads"), f"{where}.threads", high=100_000) or 0,
        base=_name(raw.get("base"), f"{where}.base"),
        head=_name(raw.get("head"), f"{where}.head"),
        metrics=tuple(_metric(m, f"{where}.metrics[{i}]") for i, m in enumerate(metrics)),
        base_version=_name(raw.get("base_version"), f"{where}.base_version", empty=True),
        head_version=_name(raw.get("head_version"), f"{where}.head_version", empty=True),
        kind=_choice(raw.get("kind", "time"), frozenset({"time", "cost"}), f"{where}.kind"),  # type: ignore[arg-type]
        explanation=tuple(_function(d, f"{where}.explanation[{i}]") for i, d in enumerate(explanation)),
        read_back=_read_back(raw.get("read_back", []), f"{where}.read_back"),
        curves=_curves(raw.get("curves", []), f"{where}.curves"),
        slo_p95_ms=_number(raw.get("slo_p95_ms"), f"{where}.slo_p95_ms"),
    )


def _curves(raw: object, where: str) -> tuple[SweepCurve, ...]:
    """A capacity verdict's sweeps, so its figures carry the marks every renderer shows (extrapolated, ≥)."""
    if not isinstance(raw, list) or len(raw) > MAX_VERDICTS:
        raise _fail(where, f"a list of at most {MAX_VERDICTS} sweeps is expected")
    curves = []
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        points = item.get("points") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(points, list) or len(points) > 64:
            raise _fail(at, "a sweep with a list of at most 64 points is expected")
        curves.append(
            SweepCurve(
                side=_choice(item.get("side"), frozenset({"base", "head"}), f"{at}.side"),  # type: ignore[arg-type]
                pair=_count(item.get("pair"), f"{at}.pair") or 0,
                points=tuple(_point(p, f"{at}.points[{j}]") for j, p in enumerate(points)),
                clients_at_slo=_number(item.get("clients_at_slo"), f"{at}.clients_at_slo") or 0.0,
                qps_at_slo=_number(item.get("qps_at_slo"), f"{at}.qps_at_slo") or 0.0,
                reached=_choice(item.get("reached"), frozenset({"within", "beyond", "below"}), f"{at}.reached"),  # type: ignore[arg-type]
                knee=_count(item.get("knee"), f"{at}.knee", high=100_000, optional=True),
            )
        )
    return tuple(curves)


def _point(raw: object, where: str) -> SweepPoint:
    if not isinstance(raw, dict):
        raise _fail(where, "not an object")
    return SweepPoint(
        threads=_count(raw.get("threads"), f"{where}.threads", high=100_000) or 0,
        qps=_number(raw.get("qps"), f"{where}.qps") or 0.0,
        p95_ms=_number(raw.get("p95_ms"), f"{where}.p95_ms") or 0.0,
    )


def _read_back(raw: object, where: str) -> tuple[ReadBack, ...]:
    """The settings a side's server did not take as asked: names and values shown only when they look like one."""
    if not isinstance(raw, list) or len(raw) > MAX_CHANGES:
        raise _fail(where, f"a list of at most {MAX_CHANGES} settings is expected")
    found = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise _fail(f"{where}[{i}]", "not an object")
        side = _choice(item.get("side"), frozenset({"base", "head"}), f"{where}[{i}].side")
        found.append(
            ReadBack(
                side,  # type: ignore[arg-type]
                _shown(item.get("name"), SETTING),
                _value(item.get("requested")),
                _value(item.get("effective")),
            )
        )
    return tuple(found)


def _function(raw: object, where: str) -> FunctionDelta:
    if not isinstance(raw, dict):
        raise _fail(where, "not an object")
    numbers = {f: _number(raw.get(f), f"{where}.{f}") for f in ("base", "head", "delta", "share")}
    if any(v is None for v in numbers.values()):
        raise _fail(where, "base, head, delta and share must be numbers")
    share = numbers["share"] or 0.0
    if not -1.0 - 1e-9 <= share <= 1.0 + 1e-9:
        raise _fail(f"{where}.share", f"not a share from -1 to 1: {share!r}")
    return FunctionDelta(
        _shown(raw.get("name"), FUNCTION),
        numbers["base"] or 0.0,
        numbers["head"] or 0.0,
        numbers["delta"] or 0.0,
        share,
    )


def _value(value: object) -> str:
    """A setting's value when it looks like one; "" (not shown) otherwise."""
    if value in ("", None):
        return ""
    return value if isinstance(value, str) and VALUE.fullmatch(value) else "(not shown)"


def _change(raw: object, where: str) -> DefinitionChange:
    if not isinstance(raw, dict):
        raise _fail(where, "not an object")
    path = raw.get("file")
    if not isinstance(path, str) or not CHANGED_FILE.fullmatch(path):
        raise _fail(f"{where}.file", f"not a file under servers/ or scenarios/: {str(path)[:40]!r}")
    line = _count(raw.get("line"), f"{where}.line", optional=True)
    section = raw.get("section", "")
    return DefinitionChange(
        file=path,
        name=_shown(raw.get("name"), SETTING),
        old=_value(raw.get("old")),
        new=_value(raw.get("new")),
        status=_choice(raw.get("status", "changed"), _STATUSES, f"{where}.status"),  # type: ignore[arg-type]
        line=line or None,
        section="" if section in ("", None) else _shown(section, SETTING),
        base=_name(raw.get("base"), f"{where}.base", empty=True),
        head=_name(raw.get("head"), f"{where}.head", empty=True),
        scenario=_name(raw.get("scenario"), f"{where}.scenario", empty=True),
    )


def load_changes(text: str) -> list[DefinitionChange]:
    """The checked change under test of a ``verdicts.json`` (none in a file from before it was written);
    call after :func:`load_verdicts`."""
    raw = bounded_json.loads(text).get("changes", [])
    if not isinstance(raw, list) or len(raw) > MAX_CHANGES:
        raise _fail("changes", f"a list of at most {MAX_CHANGES} changes is expected")
    return [_change(c, f"changes[{i}]") for i, c in enumerate(raw)]


def load_verdicts(text: str) -> tuple[list[Verdict], int]:
    """The checked verdicts of a ``verdicts.json``, and how many warnings the run wrote (only counted)."""
    try:
        doc = bounded_json.loads(text)
    except bounded_json.JSONLimitError as exc:  # checked before parsing: depth, size, digits
        raise _fail("the file", f"beyond what dbperf writes: {exc}") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise _fail("the file", f"not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != DOCUMENT_FORMAT:
        raise _fail("format", f"not a dbperf verdicts document of format {DOCUMENT_FORMAT}")
    raw = doc.get("verdicts")
    if not isinstance(raw, list) or len(raw) > MAX_VERDICTS:
        raise _fail("verdicts", f"a list of at most {MAX_VERDICTS} verdicts is expected")
    verdicts = [_with_forecast(_verdict(v, f"verdicts[{i}]"), v, f"verdicts[{i}]") for i, v in enumerate(raw)]
    warnings = sum(len(v.get("warnings") or ()) for v in raw if isinstance(v, dict))
    return verdicts, warnings


def _with_forecast(verdict: Verdict, raw: object, where: str) -> Verdict:
    """The verdict with its forecast, checked: numbers and fixed words only (docs/forecast.md)."""
    import dataclasses

    from harness.report.forecast_sections import checked_forecast

    try:
        forecast = checked_forecast(raw.get("forecast") if isinstance(raw, dict) else None, f"{where}.forecast")
    except (TypeError, ValueError) as exc:
        raise _fail(f"{where}.forecast", f"not a forecast dbperf writes ({exc})") from None
    return verdict if forecast is None else dataclasses.replace(verdict, forecast=forecast)


def _plan(raw: object, where: str) -> QueryPlan | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("tables"), list) or len(raw["tables"]) > MAX_TABLES:
        raise _fail(where, f"a plan with a list of at most {MAX_TABLES} tables is expected")
    tables = []
    for i, table in enumerate(raw["tables"]):
        if not isinstance(table, dict):
            raise _fail(f"{where}.tables[{i}]", "not an object")
        access = table.get("access_type", "")
        tables.append(
            TableAccess(
                table=_shown(table.get("table"), IDENT),
                access_type=access if isinstance(access, str) and ACCESS.fullmatch(access) else "?",
                key="" if table.get("key") in ("", None) else _shown(table.get("key"), IDENT),
                rows=_number(table.get("rows"), f"{where}.tables[{i}].rows"),
            )
        )
    flags = raw.get("filesort", False), raw.get("temporary", False)
    if not all(isinstance(f, bool) for f in flags):
        raise _fail(where, "filesort and temporary must be true or false")
    return QueryPlan(tuple(tables), filesort=flags[0], temporary=flags[1])


def _shown(value: object, pattern: re.Pattern[str]) -> str:
    """A name the run wrote when it looks like one, else ``?`` (dropped like free text)."""
    return value if isinstance(value, str) and pattern.fullmatch(value) else "?"


def _statement(raw: object, where: str) -> StatementPlans:
    if not isinstance(raw, dict):
        raise _fail(where, "not an object")
    base, head = _plan(raw.get("base"), f"{where}.base"), _plan(raw.get("head"), f"{where}.head")
    template = _shown(raw.get("template"), TEMPLATE)
    template = "(statement not shown: see the full report)" if template == "?" else template
    refused = "EXPLAIN refused: see the full report"
    return compare_statement(template, "", base or refused, head or refused)


def load_plans(text: str) -> list[PlanCheck]:
    """The checked query plans of a ``verdicts.json`` (none when it has none); call after :func:`load_verdicts`."""
    raw = bounded_json.loads(text).get("plans", [])
    if not isinstance(raw, list) or len(raw) > MAX_VERDICTS:
        raise _fail("plans", f"a list of at most {MAX_VERDICTS} plan checks is expected")
    checks = []
    for i, check in enumerate(raw):
        where = f"plans[{i}]"
        if not isinstance(check, dict):
            raise _fail(where, "not an object")
        statements = check.get("statements", [])
        if not isinstance(statements, list) or len(statements) > MAX_STATEMENTS:
            raise _fail(f"{where}.statements", f"a list of at most {MAX_STATEMENTS} statements is expected")
        note = check.get("note", "")
        checks.append(
            PlanCheck(
                scenario=_name(check.get("scenario"), f"{where}.scenario"),
                base=_name(check.get("base"), f"{where}.base"),
                head=_name(check.get("head"), f"{where}.head"),
                statements=tuple(_statement(s, f"{where}.statements[{j}]") for j, s in enumerate(statements)),
                note="not compared: see the full report" if note else "",
            )
        )
    return checks


def load_flame_graphs(text: str) -> tuple[str, ...]:
    """The flame graphs' file names of a ``verdicts.json``, each checked against :data:`FLAME_GRAPH`."""
    raw = bounded_json.loads(text).get("flame_graphs", [])
    if not isinstance(raw, list) or len(raw) > MAX_VERDICTS:
        raise _fail("flame_graphs", f"a list of at most {MAX_VERDICTS} file names is expected")
    for i, name in enumerate(raw):
        if not isinstance(name, str) or not FLAME_GRAPH.fullmatch(name):
            raise _fail(f"flame_graphs[{i}]", "not a flame graph's file name (flamegraph-SCENARIO-Nt.svg)")
    return tuple(raw)


def build_comment(text: str, *, sha: str = "", run_url: str = "", limit: int = LIMIT) -> str:
    """The comment's Markdown from a verdicts document (see the module docstring)."""
    if sha and not SHA.fullmatch(sha):
        raise _fail("--sha", "not a commit id")
    if run_url and not RUN_URL.fullmatch(run_url):
        raise _fail("--run-url", "not a GitHub Actions run page")
    verdicts, warnings = load_verdicts(text)
    plans = load_plans(text)
    changes = load_changes(text)
    notes = [f"the run wrote {warnings} warning(s): see the full report"] if warnings else []
    footer = f"head {sha[:12]}; rebuilt from verdicts.json by the trusted comment job" if sha else ""
    return render_comment(
        verdicts,
        title="dbperf performance check",
        warnings=notes,
        links=Links(run_url=run_url, flame_graphs=load_flame_graphs(text)),
        footer=footer,
        limit=limit,
        plans=plans,
        changes=changes,
    )


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
