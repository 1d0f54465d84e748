"""Definitions loaded from a tree (the base ref materialised, or the working tree as the head)."""

from __future__ import annotations

import dataclasses
import posixpath
import shutil
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness import workspace
from harness.ci.git import materialise
from harness.ci.records import SCENARIOS, SERVERS, Side, Tree
from harness.config.scenarios import load_scenario_file, required_modules
from harness.config.servers import load_server_file
from harness.errors import ConfigError
from harness.model import Scenario, Server


def _relabel(exc: ConfigError, root: Path, tree: str) -> ConfigError:
    text = str(exc).replace(f"{root}/", "")
    return ConfigError(f"{text} (at {tree})")


def load_side(side: Side, trees: Mapping[Tree, Path], profile: str) -> tuple[Server, Scenario]:
    """The server and scenario one side runs, named with its labels (``T@base``, ``S@base``).

    ``trees`` maps ``"base"`` to a :func:`materialise`-d folder and ``"head"`` to the working tree.
    """
    server_root = trees[side.server_tree]
    try:
        server = load_server_file(server_root / SERVERS / f"{side.server}.toml")
    except ConfigError as exc:
        raise _relabel(exc, server_root, side.server_tree) from None
    scenario_root = trees[side.scenario_tree]
    try:
        scenario = load_scenario_file(scenario_root / SCENARIOS / f"{side.scenario}.toml", profile)
    except ConfigError as exc:
        raise _relabel(exc, scenario_root, side.scenario_tree) from None
    return (
        dataclasses.replace(server, name=side.server_label),
        dataclasses.replace(scenario, name=side.scenario_label),
    )


@dataclass
class Trees:
    """Both materialised trees, with cached loads (a load error at head is the user's to fix)."""

    roots: dict[Tree, Path]
    profile: str

    def stems(self, tree: Tree, folder: str) -> set[str]:
        return {p.stem for p in (self.roots[tree] / folder).glob("*.toml")}

    def raw(self, tree: Tree, rel: str) -> dict[str, object]:
        try:
            return tomllib.loads((self.roots[tree] / rel).read_text())
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            return {}

    def script_refs(self, tree: Tree, rel: str) -> set[str]:
        """The Lua files a scenario file runs: its script and the modules beside it that it requires."""
        script = script_ref(self.raw(tree, rel))
        if script is None:
            return set()
        path = self.roots[tree] / script
        modules = required_modules(path) if path.is_file() else []
        return {script, *(posixpath.join(posixpath.dirname(script), m.name) for m in modules)}

    def server(self, tree: Tree, name: str) -> Server:
        try:
            return load_server_file(self.roots[tree] / SERVERS / f"{name}.toml")
        except ConfigError as exc:
            raise _relabel(exc, self.roots[tree], tree) from None

    def scenario(self, tree: Tree, name: str) -> Scenario:
        try:
            return load_scenario_file(self.roots[tree] / SCENARIOS / f"{name}.toml", self.profile)
        except ConfigError as exc:
            raise _relabel(exc, self.roots[tree], tree) from None


def stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0]


def config_ref(raw: Mapping[str, object]) -> str | None:
    value = raw.get("config_file")
    return posixpath.normpath(posixpath.join(SERVERS, value)) if isinstance(value, str) else None


def script_ref(raw: Mapping[str, object]) -> str | None:
    value = raw.get("script")
    if isinstance(value, str) and ("/" in value or value.endswith(".lua")):
        return posixpath.normpath(posixpath.join(SCENARIOS, value))
    return None


@contextmanager
def materialised(repo: Path, base_sha: str, head_sha: str, profile: str) -> Iterator[Trees]:
    folder = workspace.current().make("ciplan")
    try:
        roots: dict[Tree, Path] = {
            "base": materialise(repo, base_sha, folder / "base"),
            "head": materialise(repo, head_sha, folder / "head"),
        }
        yield Trees(roots, profile)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
