"""What the runs of one invocation share: the dataset cache, the testbed, where results are saved, and a
reporter that tells people what is happening."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from harness.dataset import DatasetCache, Snapshot
from harness.model import IntervalSample, RunResult, Scenario, Server, Testbed, stable_hash
from harness.servers import provider_for
from harness.servers.base import DatasetCredentials, Provider, ServerInstance
from harness.servers.variables import effective_variables
from harness.sysbench.driver import prepare


class Reporter(Protocol):
    """Where a measurement tells people what it is doing."""

    def phase(self, message: str) -> None: ...

    def interval(self, label: str, sample: IntervalSample) -> None: ...

    def finished(self, run: RunResult) -> None: ...


class QuietReporter:
    """A reporter that says nothing (tests, benchmarks, the pytest plugin with progress off)."""

    def phase(self, message: str) -> None:
        pass

    def interval(self, label: str, sample: IntervalSample) -> None:
        pass

    def finished(self, run: RunResult) -> None:
        pass


@dataclass
class Session:
    """Everything runs of one invocation share: the cache, the store and the testbed."""

    cache: DatasetCache
    testbed: Testbed
    git_sha: str
    save: Callable[[RunResult], None]
    reporter: Reporter = field(default_factory=QuietReporter)
    sysbench_version: str = "1.0.20"
    warnings: list[str] = field(default_factory=list)  # about the machine or the method, for the reports
    _snapshots: dict[tuple[str, str], Snapshot] = field(default_factory=dict)
    _external_prepared: set[tuple[str, str]] = field(default_factory=set)

    def snapshot(self, provider: Provider, scenario: Scenario) -> Snapshot | None:
        server = provider.server
        if server.provider == "external":
            return None
        key = (server.name + "|" + stable_hash(server.identity()), stable_hash(scenario.dataset_key()))
        if key not in self._snapshots:
            self._snapshots[key] = self.cache.ensure(provider, scenario, self.sysbench_version, say=self.reporter.phase)
        return self._snapshots[key]

    @contextmanager
    def instance(self, server: Server, scenario: Scenario) -> Iterator[ServerInstance]:
        """A fresh server for one run: restored dataset for local/container, prepared tables for external."""
        provider = provider_for(server)
        snapshot = self.snapshot(provider, scenario)
        variables = effective_variables(server, scenario)
        if snapshot is None:
            credentials = provider.credentials() if hasattr(provider, "credentials") else DatasetCredentials("", "")
            with provider.serve(None, credentials, variables) as instance:
                key = (server.name, stable_hash(scenario.dataset_key()))
                if key not in self._external_prepared:
                    self.reporter.phase(f"preparing {scenario.tables} x {scenario.table_size:,} rows on {server.name}")
                    _cleanup_external(instance, scenario)
                    prepare(scenario, instance.endpoint, threads=2)
                    self._external_prepared.add(key)
                yield instance
            return
        with (
            self.cache.restore(snapshot) as datadir,
            provider.serve(datadir, snapshot.credentials, variables) as instance,
        ):
            yield instance


def _cleanup_external(instance: ServerInstance, scenario: Scenario) -> None:
    from harness.servers.base import run_sql

    run_sql(instance.endpoint, [f"DROP TABLE IF EXISTS sbtest{i}" for i in range(1, scenario.tables + 1)])


def new_group_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
