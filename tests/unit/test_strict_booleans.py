"""Booleans in scenario and server files are TOML's true and false only (issue 35: "yes" was taken as true).

Each real catalogue file is copied with one boolean field replaced by a string or a number; loading it
is refused with the file and the field named. The same field as TOML's true loads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.config.scenarios import load_scenario_file
from harness.config.servers import load_server_file
from harness.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
SCENARIO = (REPO / "scenarios" / "oltp_read_write.toml").read_text()
SERVER = (REPO / "servers" / "mariadb-local.toml").read_text()


@pytest.mark.parametrize("value", ['"yes"', '"true"', "1"])
@pytest.mark.parametrize("field", ["rebuild_before_window", "purge_before_window", "read_view"])
def test_a_cost_boolean_that_is_not_true_or_false_is_refused(tmp_path: Path, field: str, value: str) -> None:
    text = re.sub(rf"^{field} = .*\n", "", SCENARIO, flags=re.M)
    text = re.sub(r"^(\[cost\].*\n)", rf"\g<1>{field} = {value}\n", text, count=1, flags=re.M)
    path = tmp_path / "oltp_read_write.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_scenario_file(path, "quick")
    assert str(err.value).startswith(f"{path}: field 'cost.{field}': Input should be a valid boolean")


@pytest.mark.parametrize("field", ["writes", "fresh_server"])
def test_a_scenario_boolean_that_is_not_true_or_false_is_refused(tmp_path: Path, field: str) -> None:
    text = re.sub(rf"^{field} = .*\n", "", SCENARIO, flags=re.M)
    path = tmp_path / "oltp_read_write.toml"
    path.write_text(f'{field} = "yes"\n{text}')
    with pytest.raises(
        ConfigError, match=rf"^{re.escape(str(path))}: field '{field}': Input should be a valid boolean"
    ):
        load_scenario_file(path, "quick")


def test_a_real_boolean_loads(tmp_path: Path) -> None:
    text = re.sub(r"^rebuild_before_window = .*\n", "", SCENARIO, flags=re.M)
    path = tmp_path / "oltp_read_write.toml"
    path.write_text(re.sub(r"^(\[cost\].*\n)", r"\g<1>rebuild_before_window = true\n", text, count=1, flags=re.M))
    assert load_scenario_file(path, "quick").cost.rebuild_before_window is True


def test_allow_unsafe_variables_yes_is_refused_not_taken_as_true(tmp_path: Path) -> None:
    text = re.sub(r"^allow_unsafe_variables = .*\n", "", SERVER, flags=re.M)
    path = tmp_path / "mariadb-local.toml"
    path.write_text(f'allow_unsafe_variables = "yes"\n{text}')
    with pytest.raises(ConfigError, match="field 'allow_unsafe_variables': Input should be a valid boolean"):
        load_server_file(path)
