"""Server providers behind one protocol: ``local`` (default), ``container`` and ``external``."""

from __future__ import annotations

from harness.model import Server
from harness.servers.base import DatasetCredentials, Endpoint, Provider, ServerInstance


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


__all__ = ["DatasetCredentials", "Endpoint", "Provider", "ServerInstance", "provider_for"]
