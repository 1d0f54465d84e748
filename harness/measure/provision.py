"""The one way a server is provisioned: started, with its dataset ready.

Every front end reaches a server through here (via :meth:`harness.measure.session.Session.instance`,
which :meth:`~harness.measure.session.Session.record`, plan capture and the timing probes use): a
local or container server restored from its dataset snapshot (the snapshot built here once per server
build and dataset shape, on a server started for it), or an external server with its tables prepared
once per invocation. Nothing else starts a server for a run or prepares a dataset
(``tests/unit/test_provision_path.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from harness.dataset import DatasetCache, Snapshot
from harness.model import Scenario, Server, stable_hash
from harness.servers import provider_for
from harness.servers.callgrind import Callgrind
from harness.servers.provider import DatasetCredentials, Launch, Provider, ServerInstance, run_sql
from harness.servers.variables import effective_variables
from harness.sysbench.driver import prepare


@dataclass
class ProvisionMemo:
    """What one invocation has provisioned so far: snapshots in use, external servers prepared. Mutable
    and owned by the session's memo; not a record passed between stages."""

    snapshots: dict[tuple[str, str], Snapshot] = field(default_factory=dict)
    external_prepared: set[tuple[str, str]] = field(default_factory=set)


@dataclass(frozen=True)
class Provisioner:
    """Starts servers with their datasets for one invocation (its snapshots looked up once)."""

    cache: DatasetCache
    sysbench_version: str
    say: Callable[[str], None]
    done: ProvisionMemo = field(default_factory=ProvisionMemo)

    @contextmanager
    def started(
        self, server: Server, scenario: Scenario, *, callgrind: Callgrind | None = None
    ) -> Iterator[ServerInstance]:
        """A fresh server for one run, reaped on leaving: restored dataset for local/container, prepared
        tables for external; under ``callgrind`` for a cost run."""
        provider = provider_for(server)
        snapshot = self.snapshot(provider, scenario)
        variables = effective_variables(server, scenario)
        if snapshot is None:
            credentials = provider.credentials()
            with provider.serve(Launch(None, credentials, variables, callgrind)) as instance:
                key = (server.name, stable_hash(scenario.dataset_key()))
                if key not in self.done.external_prepared:
                    self.say(f"preparing {scenario.tables} x {scenario.table_size:,} rows on {server.name}")
                    _cleanup_external(instance, scenario)
                    prepare(scenario, instance.endpoint, threads=2)
                    self.done.external_prepared.add(key)
                yield instance
            return
        with (
            self.cache.restore(snapshot) as datadir,
            provider.serve(Launch(datadir, snapshot.credentials, variables, callgrind)) as instance,
        ):
            yield instance

    def snapshot(self, provider: Provider, scenario: Scenario) -> Snapshot | None:
        """The dataset snapshot this server starts from (built once if the cache lacks it); None for external."""
        server = provider.server
        if server.provider == "external":
            return None
        key = (server.name + "|" + stable_hash(server.identity()), stable_hash(scenario.dataset_key()))
        if key not in self.done.snapshots:
            load = _loader(provider, scenario)
            self.done.snapshots[key] = self.cache.ensure(provider, scenario, self.sysbench_version, load, say=self.say)
        return self.done.snapshots[key]


def _loader(provider: Provider, scenario: Scenario) -> Callable[[Path, DatasetCredentials], float]:
    """How a new snapshot's rows are loaded: its initialised datadir served, the scenario's tables prepared
    (the seconds it took); the cache stops the server and keeps the datadir."""

    def load(datadir: Path, credentials: DatasetCredentials) -> float:
        variables = effective_variables(provider.server, scenario)
        with provider.serve(Launch(datadir, credentials, variables)) as instance:
            return prepare(scenario, instance.endpoint, threads=2)

    return load


def _cleanup_external(instance: ServerInstance, scenario: Scenario) -> None:
    """Drop the sysbench tables in the target's database (names qualified: the connection has none)."""
    database = instance.endpoint.database.replace("`", "``")
    run_sql(
        instance.endpoint,
        [f"DROP TABLE IF EXISTS `{database}`.`{table}`" for table in scenario.created_tables],
    )
