"""harness.measure.cost_dump against hand-computed and real dumps; the environment of a counted server."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.errors import SysbenchError
from harness.measure.cost_dump import parse_dump, read_dump, syscall_kind
from harness.model.work import work_vector
from harness.servers.callgrind import COUNTED_VARIABLES, Callgrind, server_environment

DATA = Path(__file__).parents[1] / "data" / "callgrind"


def test_hand_computed_dump_self_and_inclusive():
    """main->foo has calls=0 (as after callgrind_control -z with foo on the stack): its 100 is call cost."""
    expected = json.loads((DATA / "handmade.expected.json").read_text())
    profile = parse_dump((DATA / "handmade.callgrind").read_text())
    assert profile.total_ir == expected["totals"]
    by = {f.name: f for f in profile.functions}
    assert {n: f.self_ir for n, f in by.items()} == expected["self"]
    assert {n: f.inclusive_ir for n, f in by.items()} == expected["inclusive"]
    assert profile.unnamed_ir == expected["unnamed_self"]
    assert sum(f.self_ir for f in profile.functions) == profile.total_ir
    assert profile.functions[0].name == "memcpy"  # ordered by self cost


@pytest.mark.parametrize(
    "name",
    [
        "mariadb-10.11.19-local-point_select-t1",
        "mariadb-10.11.19-local-update_index-t1-rv",
        "mariadb-11.8.9-container-point_select-t1",
        "mysql-9.7.4-container-point_select-t1",
    ],
)
def test_real_dumps(name: str, tmp_path: Path):
    expected = json.loads((DATA / f"{name}.expected.json").read_text())
    profile = read_dump(DATA / f"{name}.callgrind.gz")
    assert profile.total_ir == expected["totals"]
    assert sum(f.self_ir for f in profile.functions) == expected["self_sum"]
    assert profile.unnamed_ir == expected["unnamed_self"]
    top = [[f.name, f.self_ir] for f in profile.functions[:5]]
    assert top == expected["top5_self"]
    assert gzip.decompress(profile.dump).startswith(b"# callgrind format")
    plain = tmp_path / "cg.out"
    plain.write_bytes(gzip.decompress(profile.dump))
    assert read_dump(plain).total_ir == profile.total_ir


def test_a_cut_dump_is_an_error():
    text = (DATA / "handmade.callgrind").read_text().replace("totals: 167", "")
    with pytest.raises(SysbenchError, match="cut short"):
        parse_dump(text)


def test_hand_computed_syscalls_by_kind():
    """sysCount from the functions' own lines only (a call line's count is the callee's, counted there)."""
    expected = json.loads((DATA / "handmade-systime.expected.json").read_text())
    profile = parse_dump((DATA / "handmade-systime.callgrind").read_text())
    assert profile.total_ir == expected["totals"]
    assert sum(f.self_ir for f in profile.functions) == expected["self_sum"]
    assert dict(profile.syscalls) == expected["syscalls"]


def test_a_dump_without_systime_has_no_syscalls():
    assert parse_dump((DATA / "handmade.callgrind").read_text()).syscalls == {}


def test_real_insert_dump_with_systime():
    """A real oltp_insert cost run (mariadb-local 10.11.19, flush 2, 1,000 transactions): one pwrite and one
    send per commit, no fdatasync; the kinds add up to the dump's sysCount total."""
    profile = read_dump(DATA / "mariadb-10.11.19-local-insert-t1-systime.callgrind.gz")
    assert profile.total_ir == 109_759_589  # Ir is still the first event
    assert dict(profile.syscalls) == {
        "fsync": 0,
        "pwrite": 1000,
        "pread": 0,
        "net": 1002,
        "futex": 0,
        "clock": 5048,
        "other": 1,
        "total": 7051,
    }


def test_real_dump_with_the_cache_simulation():
    """A real oltp_point_select cost run whose query cache was filled before the window (mariadb-local
    10.11.19, 1,000 transactions, ``--cache-sim=yes`` with the pinned caches): the simulated caches' misses
    are the window's ``totals:``, next to Ir and sysCount; a dump without them has none."""
    profile = read_dump(DATA / "mariadb-10.11.19-local-point_select-qc-t1-cachesim.callgrind.gz")
    assert profile.total_ir == 11_194_101
    assert dict(profile.cache_misses) == {
        "I1mr": 320_626,
        "D1mr": 162_307,
        "D1mw": 28_520,
        "ILmr": 1_821,
        "DLmr": 8_320,
        "DLmw": 605,
    }
    assert profile.syscalls["total"] == 5031  # sysCount still read, after the cache events
    assert work_vector(1000, {}, profile.syscalls, profile.cache_misses)["icache_misses"] == 320.626
    assert parse_dump((DATA / "handmade-systime.callgrind").read_text()).cache_misses == {}


def test_counted_servers_simulate_pinned_caches():
    argv = Callgrind().argv("/out")
    assert "--cache-sim=yes" in argv
    assert {"--I1=32768,8,64", "--D1=32768,8,64", "--LL=33554432,16,64"} <= set(argv)
    plain = Callgrind(cache_sim=False).argv("/out")  # a comparison's later cost runs: no simulation
    assert not [a for a in plain if a.startswith(("--cache-sim", "--I1", "--D1", "--LL"))]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("fdatasync", "fsync"),
        ("fsync", "fsync"),
        ("__libc_pwrite64", "pwrite"),
        ("pwrite", "pwrite"),
        ("pread64", "pread"),
        ("__libc_recv", "net"),
        ("recvfrom", "net"),
        ("sendto", "net"),
        ("__pthread_cond_wait", "futex"),
        ("pthread_mutex_lock", "futex"),
        ("futex_wait", "futex"),
        ("clock_gettime@@GLIBC_2.17", "clock"),
        ("time_syscall", "clock"),
        ("getpid", "other"),
        ("0x00000000004a1b20", "other"),
    ],
)
def test_syscall_kinds(name: str, kind: str):
    assert syscall_kind(name) == kind


def test_a_dump_not_counting_ir_first_is_refused():
    text = (DATA / "handmade.callgrind").read_text().replace("events: Ir", "events: sysCount Ir")
    with pytest.raises(SysbenchError, match="not Ir first"):
        parse_dump(text)


def test_cancellable_calls_are_booked_to_the_wrapper_not_the_trampoline():
    """glibc 2.41+: send -> __syscall_cancel -> __syscall_cancel_arch makes the call; it counts as send (net).
    Hand-computed: 3 sends and 2 fdatasyncs through the trampolines, 2 clock_gettime of its own."""
    profile = parse_dump((DATA / "handmade-cancel.callgrind").read_text())
    assert profile.total_ir == 70 == sum(f.self_ir for f in profile.functions)
    assert dict(profile.syscalls) == {
        "fsync": 2, "pwrite": 0, "pread": 0, "net": 3, "futex": 0, "clock": 2, "other": 0, "total": 7,
    }  # fmt: skip


def test_real_mysql_dump_with_systime_and_glibc_trampolines():
    """MySQL 9.7.4 (Debian sid, glibc 2.43) oltp_point_select, 1,000 transactions: without the trampoline
    rule every send, recv and futex wait would be 'other'."""
    profile = read_dump(DATA / "mysql-9.7.4-container-point_select-t1-systime.callgrind.gz")
    calls = dict(profile.syscalls)
    assert calls["total"] == 16_042
    assert calls["net"] == 4_310  # send 1,005 + recv 2,658 + ppoll 646 + poll 1
    assert calls["futex"] == 1_268
    assert calls["pread"] == 19
    assert calls["clock"] == 8_372  # gettimeofday 4,012 + clock_gettime 3,354 + time 1,006
    assert calls["other"] == 2_073  # sched_getcpu 2,023 and the rest


def test_counted_servers_pin_the_glibc_mmap_threshold_and_arenas_and_keep_the_users_tunables():
    pinned = "glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=64"
    assert server_environment() == {"GLIBC_TUNABLES": pinned}
    own = {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "PATH": "/usr/bin"}
    assert server_environment(own) == {"GLIBC_TUNABLES": f"glibc.malloc.tcache_count=0:{pinned}"}


def test_a_counted_mysql_server_neither_spins_nor_flushes_nor_buffers_changes_in_the_background():
    variables = Callgrind.variables("mysql", {"max_connections": "80"})
    assert variables == {
        "innodb_buffer_pool_load_at_startup": "OFF",
        "innodb_change_buffering": "none",
        "innodb_spin_wait_delay": "0",
        "innodb_sync_spin_loops": "0",
        "innodb_max_dirty_pages_pct_lwm": "0",
        "innodb_adaptive_flushing": "OFF",
        "innodb_idle_flush_pct": "0",
        "innodb_stats_auto_recalc": "OFF",
        "max_connections": "80",
        "innodb_use_native_aio": "0",
    }


def test_the_servers_own_setting_of_a_counted_variable_stands_but_valgrinds_needs_do_not_yield():
    variables = Callgrind.variables("mysql", {"innodb_sync_spin_loops": "30", "innodb_use_native_aio": "1"})
    assert variables["innodb_sync_spin_loops"] == "30"
    assert variables["innodb_spin_wait_delay"] == "0"
    assert variables["innodb_use_native_aio"] == "0"


def test_a_counted_mariadb_server_gets_no_innodb_tuning():
    """MariaDB's remaining noise was the allocator's (the arenas), not spinning or flushing: nothing is set."""
    assert "mariadb" not in COUNTED_VARIABLES
    assert Callgrind.variables("mariadb", {"innodb_buffer_pool_size": "1G"}) == {
        "innodb_buffer_pool_size": "1G",
        "innodb_use_native_aio": "0",
        "loose-innodb_buffer_pool_size_max": "1G",
        "skip_ssl": "ON",
    }
    # the pool's maximum follows the size the server reads: the last one, however spelled
    spelled = Callgrind.variables("mariadb", {"innodb_buffer_pool_size": "512M", "Innodb-Buffer-Pool-Size": "2G"})
    assert spelled["loose-innodb_buffer_pool_size_max"] == "2G"
