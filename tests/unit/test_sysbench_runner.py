"""The sysbench stage: command lines, the wrapper's JSON records and the histogram, from real captures."""

from pathlib import Path

import pytest

from harness.config.scenarios import load_scenario
from harness.errors import SysbenchError
from harness.model import histogram_percentile
from harness.model.endpoint import Endpoint
from harness.sysbench.command_lines import SECRETS_FILE, mask, prepare_argv, run_argv, workdir
from harness.sysbench.run_output import parse_output

DATA = Path(__file__).parents[1] / "data" / "wrapper"
ROOT = Path(__file__).parents[2]


def _scenario(name: str = "oltp_point_select"):
    return load_scenario(name, ROOT / "scenarios", "quick")


ENDPOINT = Endpoint("127.0.0.1", 3307, "dbperf", "s3cret")


def test_run_argv_pins_every_knob_and_warmup_checkpoint(tmp_path):
    scenario = _scenario().with_overrides(warmup_s=5, time_s=30)
    argv = run_argv(scenario, ENDPOINT, tmp_path / "dbperf_run.lua", 8, "1")
    assert argv[:3] == ["taskset", "-c", "1"]
    assert "--threads=8" in argv
    assert "--time=35" in argv  # warm-up + measured
    assert "--report-checkpoints=5" in argv
    assert "--rand-type=uniform" in argv
    assert "--histogram=on" in argv
    assert "--report-interval=1" in argv
    assert any(a.startswith("--forced-shutdown=") for a in argv)
    assert f"--tables={scenario.tables}" in argv
    assert argv[-1] == "run"


def test_run_argv_without_warmup_has_no_checkpoint_and_no_taskset(tmp_path):
    scenario = _scenario().with_overrides(warmup_s=0)
    argv = run_argv(scenario, ENDPOINT, tmp_path / "x.lua", 1, None)
    assert argv[0] == "sysbench"
    assert not any(a.startswith("--report-checkpoints") for a in argv)


def test_prepare_argv_threads_bounded_by_tables(tmp_path):
    scenario = _scenario()
    argv = prepare_argv(scenario, ENDPOINT, tmp_path / "x.lua", 16)
    assert f"--threads={scenario.tables}" in argv
    assert argv[-1] == "prepare"


@pytest.mark.parametrize("password", ["s3cret", "a b,c#d", 'with "double"', "it's"])
def test_password_goes_to_a_private_option_file_not_argv(tmp_path, password):
    endpoint = Endpoint("127.0.0.1", 3307, "dbperf", password)
    for argv in (
        run_argv(_scenario(), endpoint, tmp_path / "x.lua", 2, None),
        prepare_argv(_scenario(), endpoint, tmp_path / "x.lua", 2),
    ):
        assert password not in " ".join(argv)
        assert not any(a.startswith("--mysql-password") for a in argv)
        assert f"--config-file={tmp_path / SECRETS_FILE}" in argv
    secret = tmp_path / SECRETS_FILE
    assert secret.stat().st_mode & 0o777 == 0o600
    line = secret.read_text()
    assert line.startswith("mysql-password=") and line.endswith("\n")
    quoted = line[len("mysql-password=") : -1]
    assert quoted[0] == quoted[-1] in "\"'" and quoted[1:-1] == password


def test_password_sysbench_cannot_read_is_refused(tmp_path):
    endpoint = Endpoint("127.0.0.1", 3307, "dbperf", "both ' and \"")
    with pytest.raises(SysbenchError, match="cannot be handed to sysbench safely"):
        run_argv(_scenario(), endpoint, tmp_path / "x.lua", 2, None)


def test_no_password_no_option_file(tmp_path):
    argv = run_argv(_scenario(), Endpoint("127.0.0.1", 3307, "root", ""), tmp_path / "x.lua", 2, None)
    assert not any(a.startswith("--config-file") for a in argv)
    assert not (tmp_path / SECRETS_FILE).exists()


def test_mask_hides_the_password():
    masked = mask(["sysbench", "--mysql-password=s3cret", "--threads=2"])
    assert "s3cret" not in " ".join(masked)
    assert "--mysql-password=***" in masked


def test_workdir_wraps_bundled_and_custom_scripts():
    with workdir(_scenario()) as (folder, wrapper):
        text = wrapper.read_text()
        assert 'require("oltp_point_select")' in text
        assert "report_cumulative" in text
        assert folder.is_dir()
    assert not folder.exists()
    with workdir(_scenario("cloud_mix")) as (folder, wrapper):
        assert (folder / "dbperf_custom_cloud_mix.lua").is_file()
        assert 'require("dbperf_custom_cloud_mix")' in wrapper.read_text()


def test_parse_point_select_capture():
    text = (DATA / "oltp_point_select.2t.out").read_text()
    out = parse_output(text, warmup_s=1, exit_code=0, expected_s=4)
    assert out.failure is None
    assert out.totals is not None
    # the measured window is the last cumulative record: about 3 s after the 1 s warm-up checkpoint
    assert 2.5 < out.totals.time_s < 3.5
    assert out.totals.events == out.totals.reads > 0
    assert next(i.warmup for i in out.intervals) is True
    assert not out.intervals[-1].warmup
    hist_total = sum(b.count for b in out.histogram)
    # the histogram is reset at the checkpoint: it covers the measured window (in-flight events aside)
    assert abs(hist_total - out.totals.events) <= 16
    p50 = histogram_percentile(out.histogram, 50)
    p95 = histogram_percentile(out.histogram, 95)
    p99 = histogram_percentile(out.histogram, 99)
    assert p50 is not None and p95 is not None and p99 is not None
    assert 0 < p50 <= p95 <= p99


def test_parse_read_write_capture_counts_queries():
    text = (DATA / "oltp_read_write.4t.out").read_text()
    out = parse_output(text, warmup_s=1, exit_code=0, expected_s=4)
    assert out.failure is None and out.totals is not None
    # oltp_read_write: 18 queries + BEGIN/COMMIT per transaction (some UPDATE/DELETE count as other)
    assert out.totals.queries / out.totals.events == pytest.approx(20, abs=0.5)
    assert out.totals.writes > 0


def test_parse_failure_output_is_classified():
    text = (ROOT / "tests/data/sysbench/fail_1040_too_many_connections.log").read_text()
    out = parse_output(text, warmup_s=1, exit_code=1, expected_s=4)
    assert out.totals is None
    assert out.failure is not None
    assert out.failure.error_code == 1040


def test_parse_missing_final_report_is_a_failure():
    text = (DATA / "oltp_point_select.2t.out").read_text()
    cut = "\n".join(line for line in text.splitlines() if '"kind":"cumulative"' not in line)
    out = parse_output(cut, warmup_s=1, exit_code=0, expected_s=4)
    assert out.failure is not None
    assert out.totals is None


def test_parse_overrun_is_a_failure():
    text = (DATA / "oltp_point_select.2t.out").read_text()
    out = parse_output(text, warmup_s=1, exit_code=0, expected_s=1)
    assert out.failure is not None and out.failure.kind == "overrun"


def test_check_version_mismatch(monkeypatch: pytest.MonkeyPatch):
    import harness.sysbench.driver as sb

    monkeypatch.setattr(sb, "installed_version", lambda binary="sysbench": "1.0.18")
    with pytest.raises(SysbenchError, match=r"1\.0\.18 is installed but dbperf pins 1\.0\.20"):
        sb.check_version()


def test_forced_shutdown_allows_for_the_drain_of_many_threads():
    from harness.sysbench.command_lines import forced_shutdown_s

    assert forced_shutdown_s(10, 8) == 10
    assert forced_shutdown_s(300, 8) == 60
    assert forced_shutdown_s(2, 1024) == 32
