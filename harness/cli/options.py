"""Click options generated from the shared option family in :mod:`harness.config.option_table`.

Two kinds of options carry the family's names:

* **settings** (:func:`shared`): what to run and how (``--server``, ``--scenario``, ``--profile``,
  ``--threads`` ...), resolved as flag > ``DBPERF_*`` > ``[tool.dbperf]`` > default. A command reads
  and validates only the settings it declares, so a stray ``DBPERF_TIME`` never breaks ``dbperf runs``.
* **filters** (:func:`filters`): which stored runs a reading command is about (``runs``, ``report``,
  ``trend``, ``changes``, ``export``, ``judge``). Same flag names and formats, but only from the
  command line: a ``DBPERF_SERVER`` set for running never silently narrows what ``dbperf runs`` lists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from harness.config.option_table import OPTIONS_BY_NAME
from harness.config.settings import Settings, resolve_settings

F = TypeVar("F", bound=Callable[..., Any])

#: The settings of commands that run scenarios, and of those that also judge them.
RUN_OPTIONS = (
    "scenario", "server", "profile", "store", "threads", "time", "warmup", "repetitions", "servers-dir",
    "scenarios-dir", "cache-dir", "cost", "testbed-class", "store-timeout",
)  # fmt: skip
JUDGE_OPTIONS = ("alpha", "strict", "min-effect", "gate-metric", "forecast-gate")
#: How much work a design check may add before it stops (``gate``, ``compare``).
LIMIT_OPTIONS = ("max-minutes", "yes")
GATE_OPTIONS = (*RUN_OPTIONS, "baselines-dir", *JUDGE_OPTIONS, *LIMIT_OPTIONS)


class SharedOption(click.Option):
    """A click option that is a setting of the shared family (resolved by :func:`pop_shared`)."""

    def __init__(self, *args: Any, setting: str, command_default: str | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setting = setting
        self.command_default = command_default


def shared(*names: str, defaults: Mapping[str, str] | None = None) -> Callable[[F], F]:
    """Decorate a command with the named settings (``--server``, ``--profile``, ``--store`` ...).

    ``defaults`` replace the family's defaults for this command (``dbperf ci run`` runs the ``ci``
    profile unless told otherwise).
    """

    def decorate(func: F) -> F:
        for name in reversed(names):
            spec = OPTIONS_BY_NAME[name]
            default = (defaults or {}).get(name, spec.default)
            default_note = f" [default: {default}]" if default else ""
            help_text = f"{spec.help}; env {spec.env_var}{default_note}"
            common: dict[str, Any] = {
                "cls": SharedOption,
                "setting": name,
                "command_default": (defaults or {}).get(name),
                "help": help_text,
            }
            if spec.kind == "switch":
                decls = [f"--{spec.name}/--no-{spec.name}", spec.dest]
                func = click.option(*decls, default=None, **common)(func)
                continue
            decls = [f"--{spec.name}", spec.dest] + ([spec.short] if spec.short else [])
            if spec.kind == "flag":
                func = click.option(*decls, is_flag=True, default=False, **common)(func)
                continue
            func = click.option(
                *decls,
                type=click.STRING,
                default=None,
                multiple=spec.kind == "list",
                metavar=spec.metavar or spec.name.split("-")[-1].upper(),
                **common,
            )(func)
        return func

    return decorate


def _shared_params() -> list[SharedOption]:
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return []
    return [p for p in ctx.command.params if isinstance(p, SharedOption)]


def settings_from(kwargs: dict[str, Any]) -> Settings:
    """Settings from the command's shared options in ``kwargs`` (flag > env > pyproject > default)."""
    params = _shared_params()
    dests = {p.name for p in params}
    flags = {k: v for k, v in kwargs.items() if k in dests}
    defaults = {p.setting: p.command_default for p in params if p.command_default is not None}
    return resolve_settings(flags, names=[p.setting for p in params], defaults=defaults)


def pop_shared(kwargs: dict[str, Any]) -> Settings:
    """Like :func:`settings_from`, removing the shared options from ``kwargs``."""
    settings = settings_from(kwargs)
    for param in _shared_params():
        kwargs.pop(str(param.name), None)
    return settings


_FILTER_HELP = {
    "scenario": "only these scenarios: names or shell patterns, comma-separated, repeatable",
    "server": "only these servers: names or shell patterns, comma-separated, repeatable",
    "threads": "only these thread counts, comma-separated (e.g. 4,8)",
    "profile": "only runs of these profiles (quick, ci, full), comma-separated",
}


def filters(*names: str) -> Callable[[F], F]:
    """Decorate a reading command with run filters (``--scenario/-s``, ``--server``, ``--threads``, ``--profile``).

    They reach the command as ``filter_<name>`` tuples; :func:`harness.cli.selection.pop_filter` turns
    them into a :class:`~harness.cli.selection.RunFilter`.
    """

    def decorate(func: F) -> F:
        for name in reversed(names):
            decls = [f"--{name}", f"filter_{name}"] + (["-s"] if name == "scenario" else [])
            func = click.option(
                *decls, multiple=True, metavar=name.upper(), help=_FILTER_HELP[name] + " (flag only, no env)"
            )(func)
        return func

    return decorate


def json_option(func: F) -> F:
    """``--json``: one JSON document on stdout instead of tables (for scripts)."""
    return click.option("--json", "as_json", is_flag=True, help="print one JSON document on stdout (for scripts)")(func)
