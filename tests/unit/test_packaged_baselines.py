"""Outside a project, the cost baselines the wheel carries are installed into the user's baselines folder:
copied once, refreshed when a newer dbperf ships another file, never over one the user recorded or edited."""

from __future__ import annotations

import json
from pathlib import Path

from harness.config.packaged import PACKAGED_COST_BASELINES, install_cost_baselines
from harness.config.settings import resolve_settings

REPO = Path(__file__).resolve().parents[2]
POINT = "mariadb-local/oltp_point_select/quick/1t.json"


def test_the_package_carries_the_committed_cost_baselines():
    # harness/catalogue/baselines/cost is the repository's baselines/cost (a symlink here, a copy in the wheel)
    assert (PACKAGED_COST_BASELINES / POINT).read_bytes() == (REPO / "baselines" / "cost" / POINT).read_bytes()


def test_installed_refreshed_and_never_over_the_users_own(tmp_path: Path):
    source = tmp_path / "packaged"
    (source / POINT).parent.mkdir(parents=True)
    (source / POINT).write_text('{"v": 1}')
    home = tmp_path / "baselines"
    installed = home / "cost" / POINT

    assert install_cost_baselines(home, source) == [installed]
    assert installed.read_text() == '{"v": 1}'
    assert install_cost_baselines(home, source) == []  # nothing new

    (source / POINT).write_text('{"v": 2}')  # a newer dbperf ships another file: the untouched copy follows
    assert install_cost_baselines(home, source) == [installed]
    assert installed.read_text() == '{"v": 2}'

    installed.write_text('{"mine": true}')  # recorded here (dbperf baseline record): kept from now on
    (source / POINT).write_text('{"v": 3}')
    assert install_cost_baselines(home, source) == []
    assert installed.read_text() == '{"mine": true}'
    assert set(json.loads((home / "cost" / ".packaged.json").read_text())) == {POINT}


def test_only_outside_a_project_and_only_for_commands_that_read_baselines(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no pyproject.toml with [tool.dbperf] above it
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    settings = resolve_settings({}, environ=env, names=["store"])
    assert settings.baselines_dir == tmp_path / "data" / "dbperf" / "baselines"
    assert not settings.baselines_dir.exists()  # `dbperf runs` never writes there
    settings = resolve_settings({}, environ=env, names=["baselines-dir"])
    assert (settings.baselines_dir / "cost" / POINT).is_file()
    inside = resolve_settings({}, environ={"XDG_DATA_HOME": str(tmp_path / "other")}, root=REPO)
    assert inside.baselines_dir == REPO / "baselines" and not (tmp_path / "other").exists()
