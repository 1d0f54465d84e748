"""The plans of a scenario's statements on the base and head of an A/B comparison, before it measures.

Each side gets a server of its own, started from the dataset snapshot like any run (a private copy:
a write scenario's transactions here never reach the data a measured run starts from). Each runs
:data:`CAPTURE_EVENTS` transactions of the scenario on one thread, with the same seed, with the
general log on; the statements they issued are folded into templates, one example each
(:mod:`harness.servers.query_plans`), and every example is EXPLAINed on both servers, which by then have
run the same transactions, so both plans see the same data. The two plans of each template are
compared by :func:`harness.model.plan_changes.compare_statement`.

It costs two server starts and a second or two of sysbench. An external server is not checked: its
general log is someone else's, and a write scenario's capture would change the tables it measures.
"""

from __future__ import annotations

from typing import Final

from harness.errors import HarnessError, SysbenchError
from harness.measure.session import Session
from harness.model import Scenario, Server
from harness.model.plan_changes import compare_statement
from harness.model.query_plan import PlanCheck
from harness.servers.provider import ServerInstance
from harness.servers.query_plans import examples, explain, log_statements, logged_statements
from harness.sysbench.command_lines import cost_argv, workdir
from harness.sysbench.driver import run

#: Transactions run to capture the statements: enough for every statement of a custom mix whose rarest
#: transaction type has a 4 % share (TPC-C's delivery or stock level) to show up with 98 % probability.
CAPTURE_EVENTS: Final = 100
#: Templates EXPLAINed at most (a scenario generating unbounded SQL text is cut here, and said so).
MAX_TEMPLATES: Final = 200


def check_plans(
    session: Session, base: Server, base_scenario: Scenario, head: Server, head_scenario: Scenario
) -> PlanCheck:
    """Every statement template the scenario issues, EXPLAINed on base and head, and what changed.

    Never raises a HarnessError or OSError: a check that cannot be done is a :class:`PlanCheck` with a note, and
    the comparison goes on (its runs will meet the same problem and say so)."""
    check = PlanCheck(base_scenario.name, base.name, head.name)
    if "external" in (base.provider, head.provider):
        note = "plans not compared: an external server's general log is not dbperf's to switch on"
        return PlanCheck(check.scenario, check.base, check.head, note=note)
    session.reporter.phase(f"plans: capturing the statements of {head_scenario.name} on {base.name} and {head.name}")
    try:
        with session.instance(base, base_scenario) as base_server:
            base_examples = _capture(base_server, base_scenario)
            with session.instance(head, head_scenario) as head_server:
                head_examples = _capture(head_server, head_scenario)
                # the base's templates in the order it issued them, with its examples, then any only head issued
                found = base_examples | {t: e for t, e in head_examples.items() if t not in base_examples}
                note = ""
                if len(found) > MAX_TEMPLATES:
                    note = f"{len(found)} statement templates: the first {MAX_TEMPLATES} compared"
                    found = dict(list(found.items())[:MAX_TEMPLATES])
                statements = list(found.values())
                base_plans = explain(base_server.endpoint, statements)
                head_plans = explain(head_server.endpoint, statements)
                versions = base_server.version, head_server.version
    except (HarnessError, OSError) as exc:  # a full disk while restoring the snapshot ends the check, not the command
        return PlanCheck(check.scenario, check.base, check.head, note=f"plans not compared: {exc}")
    compared = tuple(
        compare_statement(template, example, b, h)
        for (template, example), b, h in zip(found.items(), base_plans, head_plans, strict=True)
    )
    changed = sum(1 for s in compared if s.changes)
    session.reporter.phase(f"plans: {len(compared)} statement template(s), {changed} with a changed plan")
    return PlanCheck(check.scenario, check.base, check.head, compared, versions[0], versions[1], note)


def _capture(instance: ServerInstance, scenario: Scenario) -> dict[str, str]:
    """Run the scenario's first transactions on one thread with the general log on; one example per template."""
    log_statements(instance.endpoint)
    with workdir(scenario) as (folder, wrapper):
        argv = cost_argv(scenario, instance.endpoint, wrapper, 1, CAPTURE_EVENTS, None, seed=scenario.cost.warmup_seed)
        outcome = run(argv, cwd=folder, warmup_s=0, expected_s=0, timeout_s=300)
    statements = logged_statements(instance.endpoint)
    if outcome.failure is not None:
        raise SysbenchError(f"sysbench failed while capturing the statements ({outcome.failure.message()})")
    return examples(statements)
