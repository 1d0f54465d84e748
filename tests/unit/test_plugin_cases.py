"""The pytest plugin's cases follow the shared settings: --dbperf-scenario selects, --dbperf-server lists."""

from __future__ import annotations

from pathlib import Path

from harness.config.settings import resolve_settings
from harness.pipeline.cases import scenario_cases as _cases

ROOT = Path(__file__).parents[2]


def test_scenario_patterns_and_several_servers_select_the_cases() -> None:
    settings = resolve_settings(
        {"scenario": ("oltp_point*", "cloud_mix"), "server": "mariadb-local,mariadb-local-threadpool", "cost": "0"},
        environ={},
        root=ROOT,
    )
    ids = [c.id for c in _cases(settings)]
    assert ids == [
        "oltp_point_select-mariadb-local-2t",
        "oltp_point_select-mariadb-local-threadpool-2t",
        "cloud_mix-mariadb-local-2t",
        "cloud_mix-mariadb-local-threadpool-2t",
    ]


def test_no_selection_is_the_whole_catalogue() -> None:
    settings = resolve_settings({"cost": "0"}, environ={}, root=ROOT)
    assert len({c.scenario.name for c in _cases(settings)}) == len(list((ROOT / "scenarios").glob("*.toml")))
