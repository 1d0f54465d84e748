"""Server providers behind one protocol: ``local`` (default), ``container`` and ``external``."""

from __future__ import annotations

from harness import workspace
from harness.model import Server
from harness.servers.provider import DatasetCredentials, Provider, ServerInstance


def _remove_containers(ids: list[str], owner_pid: int) -> list[str]:
    from harness.servers.container import remove_containers  # Docker's client only when there is one to remove

    return remove_containers(ids, owner_pid)


workspace.register_remover("containers", _remove_containers)


def provider_for(server: Server) -> Provider:
    """The provider that runs ``server``."""
    if server.provider == "local":
        from harness.servers.local import LocalProvider

        return LocalProvider(server)
    if server.provider == "container":
        from harness.servers.container import ContainerProvider

        return ContainerProvider(server)
    from harness.servers.external import ExternalProvider

    return ExternalProvider(server)


__all__ = ["DatasetCredentials", "Provider", "ServerInstance", "provider_for"]
