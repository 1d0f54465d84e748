"""Server providers behind one protocol: ``local`` (default), ``container`` and ``external``."""

from __future__ import annotations

from harness.model import ServerTarget
from harness.servers.base import DatasetCredentials, Endpoint, Provider, RunningServer


def provider_for(target: ServerTarget) -> Provider:
    """The provider that runs ``target``."""
    if target.provider == "local":
        from harness.servers.local import LocalProvider

        return LocalProvider(target)
    if target.provider == "container":
        from harness.servers.container import ContainerProvider

        return ContainerProvider(target)
    from harness.servers.external import ExternalProvider

    return ExternalProvider(target)


__all__ = ["DatasetCredentials", "Endpoint", "Provider", "RunningServer", "provider_for"]
