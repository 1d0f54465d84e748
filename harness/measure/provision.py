"""The one way a server is provisioned: its setup resolved once, then started with its dataset ready.

What a server and a scenario need derived from the settings (provider, server variables, builds, the
dataset snapshot's key, the cost identity) is resolved once per invocation into a :class:`ServerSetup`
(:meth:`Provisioner.setup`), which every stage after it reads. Every front end reaches a server through
here (via :meth:`harness.measure.session.Session.record` and ``Session.instance``, which plan capture and
the timing probes use): a local or container server started on a copy of its dataset snapshot (which the
dataset stage builds once per server build and dataset shape, on a server of its own), or an external
server whose tables the dataset stage prepares once per invocation. Nothing else starts a server for a
run (``tests/unit/test_provision_path.py``)."""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from harness.dataset import DatasetCache, DatasetSpec, Snapshot, snapshot_key
from harness.errors import HarnessError
from harness.measure.context import CostIdentity
from harness.model import Scenario, Server, stable_hash
from harness.servers import provider_for
from harness.servers.callgrind import Callgrind, server_environment
from harness.servers.provider import Launch, Provider, ServerInstance
from harness.servers.variables import effective_variables, requested_values, size_bytes


@dataclass(frozen=True)
class ServerSetup:
    """A server and a scenario as one invocation runs them, resolved once (:meth:`Provisioner.setup`): what
    every stage after it reads instead of asking the provider or ``servers/variables.py`` again."""

    server: Server
    scenario: Scenario  # as first asked for: its dataset and thread counts are what the setup depends on
    provider: Provider
    requested: Mapping[str, str]  # what the user asked for (config file, then variables)
    variables: Mapping[str, str]  # what dbperf sets: pinned, asked, derived minimums
    build_id: str  # the build the dataset snapshot is keyed by ("" for an external server)
    server_build: str  # the server binary's GNU build-id ("" where it cannot be read)
    snapshot_parts: Mapping[str, object] | None  # the dataset snapshot's key (None: external, no snapshot)
    snapshot_key: str  # its hash, the snapshot cache's folder key ("" for an external server)
    cost: CostIdentity | None = None  # what a cost count depends on (resolved when a cost run asks)
    redo_log_bytes: int = 0  # the redo log's configured size (0: the server's default), for the snapshot's space

    def dataset(self) -> DatasetSpec | None:
        """What the dataset stage builds this setup's snapshot from (None: an external server, no snapshot)."""
        if self.snapshot_parts is None:
            return None
        return DatasetSpec(self.provider, self.scenario, self.variables, self.snapshot_parts, self.redo_log_bytes)


def resolve_setup(server: Server, scenario: Scenario, sysbench_version: str) -> ServerSetup:
    """Everything a run of ``scenario`` on ``server`` needs derived from the settings, read once: the provider,
    the requested and effective server variables (a setting the scenario cannot work with is refused here),
    the builds and the dataset snapshot's key."""
    provider = provider_for(server)
    requested = requested_values(server)
    variables = effective_variables(server, scenario, requested)
    external = server.provider == "external"
    build = "" if external else provider.build_id()
    parts = None if external else snapshot_key(server, build, scenario, sysbench_version)
    redo = size_bytes(requested.get("innodb_log_file_size", "")) or size_bytes(
        requested.get("innodb_redo_log_capacity", "")
    )
    return ServerSetup(
        server,
        scenario,
        provider,
        requested,
        variables,
        build,
        provider.server_build(),
        parts,
        "" if parts is None else stable_hash(parts, 16),
        redo_log_bytes=redo or 0,
    )


def readable_setups(
    cases: Iterable[tuple[Server, Scenario]],
    sysbench_version: str,
    resolve: Callable[[Server, Scenario], ServerSetup] | None = None,
) -> dict[tuple[str, str], ServerSetup]:
    """Each (server, scenario)'s setup by their names, through ``resolve`` (a session's, memoised) or
    :func:`resolve_setup` when no session is open (an estimate, a pre-run check); one that cannot be
    read (an engine that is down, a binary not installed, a refused setting) is left out: the runs
    meet the same failure and say it."""
    out: dict[tuple[str, str], ServerSetup] = {}
    for server, scenario in cases:
        if (server.name, scenario.name) in out:
            continue
        try:
            out[(server.name, scenario.name)] = (
                resolve(server, scenario) if resolve else resolve_setup(server, scenario, sysbench_version)
            )
        except (HarnessError, OSError):
            continue
    return out


def cost_identity(setup: ServerSetup) -> CostIdentity:
    """What a cost count of the setup's server depends on: counting tool, architecture, build, requested config."""
    server = setup.server
    requested = {
        "flavour": server.flavour,
        "variables": Callgrind.variables(server.flavour, dict(setup.variables)),
        "environment": server_environment(),
        "config": server.config_file.read_text() if server.config_file and server.config_file.is_file() else "",
    }
    tool = setup.provider.counting_tool()
    return CostIdentity("callgrind", tool, platform.machine(), setup.server_build, stable_hash(requested))


def _setup_key(server: Server, scenario: Scenario) -> tuple[object, ...]:
    """What a setup depends on: the whole server record, the scenario's dataset and thread counts."""
    dataset = (scenario.script, scenario.dataset_name, scenario.tables, scenario.table_size, scenario.dataset_loader)
    return (repr(server), scenario.name, *dataset, tuple(scenario.threads))


@dataclass
class ProvisionMemo:
    """The setups one invocation has resolved so far (what it provisioned, the dataset cache keeps).
    Mutable and owned by the session's memo; not a record passed between stages."""

    setups: dict[tuple[object, ...], ServerSetup] = field(default_factory=dict)


@dataclass(frozen=True)
class Provisioner:
    """Starts servers with their datasets for one invocation (each setup resolved and each snapshot looked up once)."""

    cache: DatasetCache
    sysbench_version: str
    say: Callable[[str], None]
    done: ProvisionMemo = field(default_factory=ProvisionMemo)

    def setup(self, server: Server, scenario: Scenario, *, cost: bool = False) -> ServerSetup:
        """The invocation's one :class:`ServerSetup` for ``server`` and ``scenario`` (resolved on first
        asking); ``cost``: with its cost identity (read once, when a cost run first needs it)."""
        key = _setup_key(server, scenario)
        found = self.done.setups.get(key)
        if found is None:
            found = self.done.setups[key] = resolve_setup(server, scenario, self.sysbench_version)
        if cost and found.cost is None:
            found = self.done.setups[key] = replace(found, cost=cost_identity(found))
        return found

    @contextmanager
    def started(self, setup: ServerSetup, *, callgrind: Callgrind | None = None) -> Iterator[ServerInstance]:
        """A fresh server for one run, reaped on leaving: on a restored copy of its dataset snapshot for
        local/container, with its tables prepared for external; under ``callgrind`` for a cost run."""
        provider, variables, spec = setup.provider, setup.variables, setup.dataset()
        if spec is None:
            with provider.serve(Launch(None, provider.credentials(), variables, callgrind)) as instance:
                self.cache.fill_external(instance, setup.scenario, setup.server.name, self.say)
                yield instance
            return
        with (
            self.cache.restored(spec, say=self.say) as (datadir, snapshot),
            provider.serve(Launch(datadir, snapshot.credentials, variables, callgrind)) as instance,
        ):
            yield instance

    def snapshot(self, setup: ServerSetup) -> Snapshot | None:
        """The dataset snapshot this server starts from (built once if the cache lacks it); None for external."""
        spec = setup.dataset()
        return None if spec is None else self.cache.snapshot(spec, say=self.say)
