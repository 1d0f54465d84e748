"""Server providers behind one protocol: ``local`` (default), ``container`` and ``external``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness import workspace
from harness.model import Server
from harness.servers.provider import DatasetCredentials, Provider, ServerInstance
from harness.servers.unwind import Extents, function_extents


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


def binary_extents(server: Server) -> Callable[[str], Extents]:
    """Where the functions of the binaries ``server`` runs start and end, by path as the server sees it: this
    machine's files for a local server, the image's for a container, nothing for an external server."""
    if server.provider == "local":
        return lambda path: function_extents(Path(path))
    if server.provider == "container":
        from harness.servers.container import ContainerProvider

        return ContainerProvider(server).file_extents
    return lambda path: Extents()


__all__ = ["DatasetCredentials", "Provider", "ServerInstance", "binary_extents", "provider_for"]
