"""One setting's value, parsed from a flag, an environment variable or ``[tool.dbperf]``, with an error
that names the option and says what it takes. List options take comma-separated values and may be
repeated: ``-s oltp_point_select -s 'oltp_read_*'`` and ``-s oltp_point_select,oltp_read_*`` mean
the same."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from harness.errors import ConfigError
from harness.model import METRICS
from harness.model.operation_stats import is_operation_metric


def split_list(values: object) -> tuple[str, ...]:
    """``("a,b", "c")`` or ``"a, b,c"`` -> ``("a", "b", "c")``: list options, repeated or comma-separated."""
    if values is None:
        return ()
    items = [values] if isinstance(values, str) else list(values) if isinstance(values, Sequence) else [values]
    out: list[str] = []
    for item in items:
        out += [part.strip() for part in str(item).split(",") if part.strip()]
    return tuple(dict.fromkeys(out))


def as_int(name: str, value: object) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise ConfigError(f"--{name} must be a whole number, got {value!r}") from None
    if number < 0:
        raise ConfigError(f"--{name} must not be negative, got {number}")
    return number


def as_bool(name: str, value: object) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    if text in {"", "auto"}:
        return None
    raise ConfigError(f"{name} takes true or false (1/0, yes/no, on/off), got {value!r}")


def parse_threads(value: object) -> tuple[int, ...]:
    """``"1,2,8"`` (or ``("1,2", "8")``) -> ``(1, 2, 8)`` with a clear error for anything else."""
    if isinstance(value, int):
        value = str(value)
    parts = split_list(value)
    given = ",".join(parts) or "nothing"  # as typed, whether it came repeated, comma-separated or from the env
    bad = [part for part in parts if not part.isdigit()]
    if bad:
        raise ConfigError(
            f"--threads takes comma-separated whole numbers like 1,4,16; got {given} ({bad[0]} is not one)"
        )
    counts = tuple(int(part) for part in parts)
    if not counts or any(c < 1 or c > 4096 for c in counts):
        raise ConfigError(f"--threads values must be between 1 and 4096; got {given}")
    return tuple(dict.fromkeys(counts))


def parse_alpha(value: object) -> float:
    try:
        alpha = float(str(value))
    except ValueError:
        raise ConfigError(f"--alpha takes a number between 0 and 0.5 (e.g. 0.02), got {value!r}") from None
    if not 0.0 < alpha <= 0.5:
        raise ConfigError(f"--alpha must be above 0 and at most 0.5, got {alpha:g}")
    return alpha


def parse_min_effects(value: object) -> dict[str, float]:
    """``qps=0.03,p95_ms=10%`` -> ``{"qps": 0.03, "p95_ms": 0.1}``."""
    out: dict[str, float] = {}
    for item in split_list(value):
        metric, sep, size = item.partition("=")
        metric, size = metric.strip(), size.strip()
        if not sep or (metric not in METRICS and not is_operation_metric(metric)):
            raise ConfigError(
                f"--min-effect takes METRIC=FRACTION or METRIC=N% with METRIC one of {', '.join(METRICS)}; got {item!r}"
            )
        try:
            fraction = float(size[:-1]) / 100.0 if size.endswith("%") else float(size)
        except ValueError:
            raise ConfigError(f"--min-effect {metric}: {size!r} is not a number (e.g. 0.03 or 3%)") from None
        if not 0.0 < fraction < 1.0:
            raise ConfigError(f"--min-effect {metric}: must be above 0 and below 100 %, got {size}")
        out[metric] = fraction
    return out


def parse_metrics(value: object, option: str = "--gate-metric") -> tuple[str, ...]:
    metrics = split_list(value)
    unknown = [m for m in metrics if m not in METRICS and not is_operation_metric(m)]
    if unknown or not metrics:
        raise ConfigError(f"{option} takes metric names among {', '.join(METRICS)}; got {', '.join(unknown) or '-'}")
    return metrics


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``did you mean oltp_point_select?`` for the known names close to ``name`` ("" when none is)."""
    names = sorted(set(known))
    started = [k for k in names if k.startswith(name)] if name else []
    close = list(dict.fromkeys(started + difflib.get_close_matches(name, names, n=3, cutoff=0.7)))[:3]
    return f"did you mean {' or '.join(close)}?" if close else ""
