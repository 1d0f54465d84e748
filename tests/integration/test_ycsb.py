"""The six YCSB-like workloads run on MariaDB (local) and MySQL 9.7 (container), each for a few seconds,
and store their per-operation statistics: the types each workload mixes, in its proportions, counting the
same measured window as sysbench's totals (issue 22, "Done when")."""

from __future__ import annotations

import pytest
from support import SERVERS

from harness import pipeline
from harness.config.servers import load_server
from harness.measure.session import QuietReporter
from harness.store import Store

pytestmark = pytest.mark.integration

#: The operation mix of each workload (YCSB's core workloads).
MIX: dict[str, dict[str, float]] = {
    "ycsb_a": {"READ": 0.5, "UPDATE": 0.5},
    "ycsb_b": {"READ": 0.95, "UPDATE": 0.05},
    "ycsb_c": {"READ": 1.0},
    "ycsb_d": {"READ": 0.95, "INSERT": 0.05},
    "ycsb_e": {"SCAN": 0.95, "INSERT": 0.05},
    "ycsb_f": {"READ": 0.5, "READ_MODIFY_WRITE": 0.5},
}


@pytest.mark.parametrize(
    "server_name",
    [pytest.param("mariadb-local", id="mariadb-local"), pytest.param("mysql-9.7", marks=pytest.mark.docker)],
)
def test_every_ycsb_workload_runs_and_reports_its_operations(server_name, store_path, settings_factory):
    server = load_server(server_name, SERVERS)
    settings = settings_factory(store_path, server=server_name, profile="quick", time=2, warmup=1, threads="2")

    results = [r for name in MIX for r in pipeline.run(settings, name, QuietReporter(), server=server_name).runs]

    assert sorted(r.scenario for r in results) == sorted(MIX)
    store = Store(store_path)
    for result in results:
        where = f"{server_name} {result.scenario} (run {result.run_id})"
        assert result.ok, f"{where}: {result.failure}"
        assert result.server_version.startswith(server.version)
        stored = store.get(result.run_id)
        assert stored.operations == result.operations, where
        ops = {op.type: op for op in stored.operations}
        mix = MIX[result.scenario]
        assert set(ops) <= set(mix) and max(mix, key=mix.__getitem__) in ops, f"{where}: {sorted(ops)}"
        total = sum(op.count for op in ops.values())
        assert total > 20, f"{where}: only {total} operations"
        # the warm-up cut of the operations and of sysbench's totals agree (one event per operation)
        assert result.totals is not None
        assert abs(total - result.totals.events) <= max(4, 0.03 * total), f"{where}: {total} vs {result.totals.events}"
        for op_type, share in mix.items():
            found = ops[op_type].count / total if op_type in ops else 0.0
            assert abs(found - share) <= 0.03 + 3 * (share * (1 - share) / total) ** 0.5, f"{where}: {op_type} {found}"
        for op in ops.values():
            assert op.errors == 0 and op.seconds == pytest.approx(result.totals.time_s)
            assert sum(b.count for b in op.histogram) == op.count
            assert op.p50_ms is not None and op.p99_ms is not None and 0 < op.p50_ms <= op.p99_ms
        assert stored.metric("ops_per_s") == pytest.approx(total / result.totals.time_s)
