"""Reading the catalogue's TOML files (servers/, scenarios/) with pydantic validation."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from harness.config.values import did_you_mean
from harness.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)
#: Far larger than any server or scenario file (the largest in the catalogue is a few KiB).
MAX_BYTES = 1024 * 1024


def load_toml_model(path: Path, model: type[ModelT], what: str, fields_doc: str) -> ModelT:
    """Read a TOML file and validate it with ``model``; every problem names the file and the field.

    ``fields_doc`` says where the allowed fields are documented (shown for a misspelt field).
    """
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_BYTES // 1024} KiB: not a {what} dbperf reads")
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file (no UTF-8 at byte {exc.start}); a {what} is TOML text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
    except RecursionError:  # tomllib recurses per nested array or inline table
        raise ConfigError(f"{path}: nested too deeply to be a {what}") from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(file)"
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown field '{where}' (check the spelling; the fields are in {fields_doc})")
            elif err["type"] in {"literal_error", "value_error", "missing"}:
                problems.append(f"field '{where}': {err['msg']}")
            else:
                problems.append(f"field '{where}': {err['msg']} (got {err.get('input')!r})")
        raise ConfigError(f"{path}: " + "; ".join(problems)) from None


def unknown_name(what: str, name: str, known: Sequence[str], folder: Path) -> ConfigError:
    """``unknown scenario 'oltp_pont_select' in scenarios/ (did you mean oltp_point_select?); known: ...``."""
    hint = did_you_mean(name, known)
    return ConfigError(
        f"unknown {what} '{name}' in {folder}{f' ({hint})' if hint else ''}; known: {', '.join(known) or 'none'}"
    )
