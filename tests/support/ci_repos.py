"""Small git projects for the CI planner's tests: servers, scenarios, commits, and the git they run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from harness.ci.plan import plan
from harness.ci.records import CiPlan

LOCAL_A = """\
# the default server
name = "local-a"
description = "local MariaDB"
flavour = "mariadb"
version = "10.11"
provider = "local"
binary = "mariadbd"
config_file = "conf/a.cnf"
cpuset = "0"
client_cpuset = "1"
"""

CONF_A = "[mariadbd]\ninnodb_flush_log_at_trx_commit = 1\n"

CONF_B = "[mariadbd]\nskip-name-resolve\n"


def scenario_toml(name: str, script: str, *, ci_time: int = 10, full_time: int = 60, reps: int = 6) -> str:
    return f"""\
name = "{name}"
description = "test scenario {name}"
script = "{script}"
writes = false

[dataset]
tables = 2
table_size = 1000

[profiles.quick]
threads = [2]
warmup_s = 1
time_s = 3
repetitions = 1

[profiles.ci]
threads = [4]
warmup_s = 2
time_s = {ci_time}
repetitions = {reps}

[profiles.full]
threads = [1, 8]
warmup_s = 5
time_s = {full_time}
repetitions = 3
"""


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    out = subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return out.stdout.strip()


def write(repo: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def commit(repo: Path, message: str, files: dict[str, str | None] | None = None) -> str:
    write(repo, files or {})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


CONTAINER_B = """\
name = "container-b"
description = "MariaDB in a container"
flavour = "mariadb"
version = "10.11"
provider = "container"
image = "dbperf/mariadb:10.11"
config_file = "conf/b.cnf"
memory_limit = "4g"

[variables]
innodb_buffer_pool_size = "1G"
"""

MIX_LUA = 'require("oltp_common")\nfunction event() end\n'


def planner_repo(tmp_path: Path) -> Path:
    """A small project (two servers, two scenarios) in git, on a branch ``change`` off ``main``."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commit(
        root,
        "initial",
        {
            "pyproject.toml": '[project]\nname = "x"\n\n[tool.dbperf]\nserver = "local-a"\n',
            "harness/__init__.py": '"""harness"""\n',
            "README.md": "readme\n",
            "servers/local-a.toml": LOCAL_A,
            "servers/container-b.toml": CONTAINER_B,
            "servers/conf/a.cnf": CONF_A,
            "servers/conf/b.cnf": CONF_B,
            "scenarios/point.toml": scenario_toml("point", "oltp_point_select"),
            "scenarios/mix.toml": scenario_toml("mix", "lua/mix.lua"),
            "scenarios/lua/mix.lua": MIX_LUA,
        },
    )
    git(root, "checkout", "-q", "-b", "change")
    return root


DEFAULTS = ("point", "mix")


def make_plan(repo: Path, base: str = "main", head: str = "change", **kwargs: object) -> CiPlan:
    options: dict[str, object] = {"profile": "ci", "default_scenarios": DEFAULTS, "default_server": "local-a"}
    options.update(kwargs)
    return plan(repo, base, head, **options)  # type: ignore[arg-type]
