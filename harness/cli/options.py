"""Click options generated from the shared option family in :mod:`harness.config.settings`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from harness.config.settings import OPTIONS_BY_NAME, Settings, resolve_settings

F = TypeVar("F", bound=Callable[..., Any])

#: The shared options of commands that run scenarios, and of those that also judge them.
RUN_OPTIONS = (
    "server", "profile", "store", "threads", "time", "warmup", "repetitions", "servers-dir", "scenarios-dir",
    "cache-dir", "cost",
)  # fmt: skip
GATE_OPTIONS = (*RUN_OPTIONS, "baselines-dir")


def shared(*names: str) -> Callable[[F], F]:
    """Decorate a command with the named shared options (``--server``, ``--profile``, ``--store`` ...)."""

    def decorate(func: F) -> F:
        for name in reversed(names):
            spec = OPTIONS_BY_NAME[name]
            default_note = f" [default: {spec.default}]" if spec.default else ""
            help_text = f"{spec.help}; env {spec.env_var}{default_note}"
            if spec.kind == "switch":
                decls = (f"--{spec.name}/--no-{spec.name}", spec.dest)
                func = click.option(*decls, default=None, help=help_text)(func)
                continue
            param_type: Any = click.INT if spec.kind == "int" else click.STRING
            func = click.option(f"--{spec.name}", spec.dest, type=param_type, default=None, help=help_text)(func)
        return func

    return decorate


def settings_from(kwargs: dict[str, Any]) -> Settings:
    """Settings from the shared options present in ``kwargs`` (flag > env > pyproject > default)."""
    flags = {k: v for k, v in kwargs.items() if k.replace("_", "-") in OPTIONS_BY_NAME}
    return resolve_settings(flags)


def pop_shared(kwargs: dict[str, Any]) -> Settings:
    """Like :func:`settings_from`, removing the shared options from ``kwargs``."""
    settings = settings_from(kwargs)
    for key in list(kwargs):
        if key.replace("_", "-") in OPTIONS_BY_NAME:
            del kwargs[key]
    return settings
