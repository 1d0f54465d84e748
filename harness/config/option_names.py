"""Server option names as the server reads them: every spelling a server accepts resolved to one option.

MariaDB and MySQL read an option by any unambiguous prefix of its name (MariaDB; MySQL 9.7 refuses
prefixes, but resolving them costs nothing there), with ``-`` and ``_`` alike, and behind the prefixes
``loose``, ``skip``, ``disable``, ``enable``, ``maximum`` and ``autoset`` (``loose-skip-init-fil``).
A check that compared the name as written (``init_fil``) with a list of unsafe options (``init_file``)
let the option through, so every check over server variable names first resolves the name here, and a
name that resolves to no option, or to several, is refused with what it could mean.

The option lists come from the servers' own ``--verbose --help`` (its ``--name`` lines and the table of
values at its end): one committed file per flavour and version in ``harness/config/server_options/``,
made by ``tools/server_options.py`` from the real binaries and checked against the installed ones by
tests, so a server file is checked without running any binary it names. See servers/README.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from harness.errors import ConfigError

#: The committed option lists, ``<flavour>-<version>.txt``: one canonical name per line, ``#`` comments.
OPTION_LISTS = Path(__file__).resolve().parent / "server_options"

#: The prefixes my_getopt strips before it looks a name up again (``loose`` also silences an unknown
#: name; ``skip``/``disable`` set a boolean off, ``enable`` on, ``maximum`` a session limit, ``autoset``
#: MariaDB's automatic value).
SPECIAL_PREFIXES = ("loose", "skip", "disable", "enable", "maximum", "autoset")

_HELP_OPTION = re.compile(r"^ {2}(?:-\w, )?--([A-Za-z0-9][A-Za-z0-9_-]*)")
_TABLE_ROW = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_-]*)(?:\s|$)")


def normal(name: str) -> str:
    """A name as compared: stripped, lower case, ``-`` read as ``_``."""
    return name.strip().lower().replace("-", "_")


def parse_help(text: str) -> frozenset[str]:
    """The option names in a server's ``--verbose --help`` output, in :func:`normal` form: the
    ``--name`` lines of the options list and the first column of the table of values at its end."""
    names: set[str] = set()
    in_table = False
    for line in text.splitlines():
        if in_table:
            if not line.strip():
                break
            row = _TABLE_ROW.match(line)
            if row:
                names.add(normal(row.group(1)))
        elif line.startswith("-----") and " ---" in line:
            in_table = True
        else:
            option = _HELP_OPTION.match(line)
            if option:
                names.add(normal(option.group(1)))
    return frozenset(names)


@dataclass(frozen=True)
class Resolved:
    """What a written name means to the server: its option and the special prefixes in front."""

    written: str
    option: str
    prefixes: tuple[str, ...] = ()

    @property
    def canonical(self) -> str:
        """The name in canonical form, prefixes kept (``skip_name_resolve``, ``loose_thread_handling``)."""
        return "_".join((*self.prefixes, self.option))

    def shown(self) -> str:
        """``'init_fil' (read as init_file)`` when the written name differs, ``'init_file'`` otherwise."""
        if normal(self.written) == self.option:
            return f"'{self.written.strip()}'"
        return f"'{self.written.strip()}' (read as {self.option})"


@dataclass(frozen=True)
class OptionNames:
    """The options one server (flavour and version) knows, and how it reads a written name."""

    source: str
    names: frozenset[str]

    def resolve(self, name: str, where: str) -> Resolved:
        """The one option ``name`` means; ConfigError naming the candidates when it means several or none."""
        found = self._lookup(normal(name), ())
        if isinstance(found, Resolved):
            return Resolved(name, found.option, found.prefixes)
        if found:
            shown = ", ".join(sorted(found)[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "")
            raise ConfigError(
                f"{where}: server variable '{name.strip()}' is ambiguous: it is the start of {shown} "
                f"({self.source}); write the option's full name"
            )
        raise ConfigError(
            f"{where}: server variable '{name.strip()}' is not an option of {self.source}; check its "
            "spelling (see servers/README.md)"
        )

    def _lookup(self, key: str, prefixes: tuple[str, ...]) -> Resolved | list[str]:
        """The option ``key`` (normal form) names, or the candidates (several: ambiguous; none: unknown).

        As my_getopt: the full name, then a prefix of exactly one name; only when neither matches are
        the special prefixes stripped and the rest looked up again."""
        if key in self.names:
            return Resolved(key, key, prefixes)
        candidates = sorted(n for n in self.names if n.startswith(key))
        if len(candidates) == 1:
            return Resolved(key, candidates[0], prefixes)
        if candidates:
            return candidates
        for prefix in SPECIAL_PREFIXES:
            if key.startswith(prefix + "_") and prefix not in prefixes:
                return self._lookup(key[len(prefix) + 1 :], (*prefixes, prefix))
        return []


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def committed_lists(folder: Path = OPTION_LISTS) -> dict[tuple[str, str], Path]:
    """``{(flavour, version): file}`` of the committed option lists."""
    out = {}
    for path in sorted(folder.glob("*.txt")):
        flavour, _, version = path.stem.partition("-")
        out[(flavour, version)] = path
    return out


def read_list(path: Path) -> frozenset[str]:
    """The names of one committed option list."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return frozenset(normal(line) for line in lines if line)


@cache
def option_names(flavour: str, version: str, folder: Path = OPTION_LISTS) -> OptionNames:
    """The committed option list of the server ``flavour`` ``version`` (a pin: ``10.11`` or ``10.11.6``
    reads ``mariadb-10.11.txt``); ConfigError saying how to make one when none is committed."""
    pin = _version_key(version)
    lists = committed_lists(folder)
    matches = [
        (v, path) for (f, v), path in lists.items() if f == flavour and pin[: len(_version_key(v))] == _version_key(v)
    ]
    if not matches:
        known = ", ".join(f"{f} {v}" for f, v in lists) or "none"
        raise ConfigError(
            f"dbperf has no option list for {flavour} {version} (it has {known}), so it cannot check this "
            f"server's variable names: make one with `python tools/server_options.py {flavour} VERSION "
            "--image IMAGE` (or --binary PATH) and commit it"
        )
    version_found, path = max(matches, key=lambda m: len(_version_key(m[0])))
    return OptionNames(f"{flavour} {version_found}", read_list(path))


def setting_name(name: str, options: OptionNames | None) -> str:
    """The option a written name sets, for comparing settings (``max-Connection`` is ``max_connections``,
    ``loose_x`` is ``x``, ``skip_x`` stays ``skip_x``). A name ``options`` cannot resolve, or None (no
    list for the server's version), keeps its :func:`normal` form without ``loose_``: the server file's
    own check refused it already, unless the file allows unsafe variables."""
    if options is not None:
        try:
            resolved = options.resolve(name, "")
        except ConfigError:
            pass
        else:
            return resolved.option if resolved.prefixes in {(), ("loose",)} else resolved.canonical
    return normal(name).removeprefix("loose_")


def server_setting_names(flavour: str, version: str) -> OptionNames | None:
    """The option list of a server flavour and version, or None when none is committed."""
    try:
        return option_names(flavour, version)
    except ConfigError:
        return None
