"""Container provider: testcontainers-python with host networking and our own readiness and cleanup.

Why not ``MySqlContainer``: it is built around the official image's entrypoint, exposes 3306 (which
docker-py refuses with host networking) and its host/port getters break with host networking. We use
a plain ``DockerContainer`` with ``network_mode="host"`` on a free loopback port (published ports go
through a userland proxy that costs throughput), the server's CPU set / quota / memory limit, the
generated my.cnf mounted read-only and the datadir bind-mounted from the host, so dataset snapshots
work the same way as for local servers.

Ryuk (testcontainers' reaper) needs an image and a published port we do not have: it is disabled, and
every container carries the label ``org.dbperf.managed=true``; :func:`sweep_containers` removes any
left over from a process that died.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import shutil
import tarfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

import docker
import docker.errors
from testcontainers.core.container import DockerContainer

from harness import workspace
from harness.errors import ServerError
from harness.model import Server
from harness.model.endpoint import Endpoint
from harness.servers.callgrind import Control, server_environment
from harness.servers.elf import build_id
from harness.servers.local import free_port, init_failure, summarise_log
from harness.servers.provider import (
    DatasetCredentials,
    Launch,
    bootstrap,
    init_args,
)
from harness.servers.unwind import Extents, extents_of
from harness.servers.variables import write_cnf

LABEL = "org.dbperf.managed"
OWNER_LABEL = "org.dbperf.owner-pid"
DATA = "/data"
CNF = "/etc/dbperf/my.cnf"
COUNTS = "/callgrind"
_BUILD_IDS: dict[str, str] = {}  # image id -> the server binary's build-id
_EXTENTS: dict[tuple[str, str], Extents] = {}  # (image id, path) -> its functions' extents


def docker_client() -> Any:
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        failure = exc.__class__.__name__
    else:
        return client
    # docker-py leaves the socket of its first request open when the engine does not answer (in its
    # constructor, before there is a client to close); outside the except block nothing holds it any more:
    # collected here, not during some later test or command
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    raise ServerError(f"the Docker engine is not reachable ({failure}); start it with tools/start-docker.sh")


def remove_containers(ids: list[str], owner_pid: int) -> list[str]:
    """Remove these containers (a dead dbperf process's, by id), if they carry dbperf's owner label."""
    client = docker_client()
    removed = []
    for container_id in ids:
        with contextlib.suppress(docker.errors.DockerException):
            container = client.containers.get(container_id)
            if container.labels.get(OWNER_LABEL) == str(owner_pid):
                container.remove(force=True)
                removed.append(container.name)
    return removed


def sweep_containers(only_dead_owners: bool = True) -> list[str]:
    """Remove containers labelled by dbperf whose owning process is gone (or all, if asked)."""
    client = docker_client()
    removed = []
    # sparse: the labels come with the listing itself; a full listing inspects every container after it
    # listed them all, and fails (404) when another process removes one of them in between
    for container in client.containers.list(all=True, sparse=True, filters={"label": f"{LABEL}=true"}):
        owner = (container.attrs.get("Labels") or {}).get(OWNER_LABEL, "")
        if only_dead_owners and owner.isdigit() and Path(f"/proc/{owner}").exists():
            continue
        with contextlib.suppress(docker.errors.DockerException):
            container.remove(force=True)
            removed.append(str((container.attrs.get("Names") or [container.id])[0]).lstrip("/"))
    return removed


@dataclass(frozen=True)
class ContainerInstance:
    endpoint: Endpoint
    container: DockerContainer
    version: str
    control: Control | None = None

    @property
    def host_pid(self) -> int | None:
        try:
            wrapped = self.container.get_wrapped_container()
            wrapped.reload()
            pid = int(wrapped.attrs["State"]["Pid"])
        except (docker.errors.DockerException, KeyError, ValueError):
            return None
        return pid or None

    def alive(self) -> bool:
        try:
            wrapped = self.container.get_wrapped_container()
            wrapped.reload()
        except docker.errors.DockerException:
            return False
        return bool(wrapped.status == "running")

    def error_log_tail(self) -> str:
        status = ""
        try:
            wrapped = self.container.get_wrapped_container()
            wrapped.reload()
            state = wrapped.attrs.get("State", {})
            if state.get("Status") != "running":
                oom = ", out of memory" if state.get("OOMKilled") else ""
                status = f"container {state.get('Status')} with exit code {state.get('ExitCode')}{oom}; "
            out, err = self.container.get_logs()
        except docker.errors.DockerException:
            return status + "(no log)"
        return status + summarise_log((out + err).decode(errors="replace").strip().splitlines(), 3, errors_only=True)

    def save_log(self, destination: Path) -> bool:
        """Write the container's log to ``destination`` (the container is removed when it stops)."""
        try:
            out, err = self.container.get_logs()
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_bytes(out + err)
        except (docker.errors.DockerException, OSError):
            return False
        return True


class ContainerProvider:
    """Runs the server's image with testcontainers."""

    def __init__(self, server: Server) -> None:
        if not server.image:
            raise ServerError(f"server '{server.name}' has no image")
        self.server = server
        self.image: str = server.image

    def _check_image(self) -> Any:
        client = docker_client()
        try:
            return client.images.get(self.image)
        except docker.errors.ImageNotFound:
            raise ServerError(
                f"image '{self.image}' for server '{self.server.name}' is not present; build the offline "
                "images with tools/build-images.sh (or docker pull it where a registry is reachable)"
            ) from None

    def build_id(self) -> str:
        image = self._check_image()
        return f"{self.image}@{image.id}"

    def credentials(self) -> DatasetCredentials:
        return DatasetCredentials("", "")

    def server_build(self) -> str:
        """The build-id of the server binary inside the image (read from a stopped container's files)."""
        image = self._check_image()
        if image.id not in _BUILD_IDS:
            binary = "/usr/sbin/mariadbd" if self.server.flavour == "mariadb" else "/usr/sbin/mysqld"
            client = docker_client()
            holder = client.containers.create(self.image, command=["true"], labels={LABEL: "true"})
            try:
                stream, _ = holder.get_archive(binary)
                with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
                    member = archive.extractfile(archive.getmembers()[0])
                    _BUILD_IDS[image.id] = build_id(member.read(1 << 20)) if member else ""
            except (docker.errors.DockerException, tarfile.TarError, IndexError):
                _BUILD_IDS[image.id] = ""
            finally:
                with contextlib.suppress(docker.errors.DockerException):
                    holder.remove(force=True)
        return _BUILD_IDS[image.id]

    def file_extents(self, path: str) -> Extents:
        """The function extents of a binary inside the image (:mod:`harness.servers.unwind`), read once per
        image and path from a stopped container's files; empty when it cannot be read."""
        image = self._check_image()
        key = (image.id, path)
        if key not in _EXTENTS:
            holder = docker_client().containers.create(self.image, command=["true"], labels={LABEL: "true"})
            try:
                stream, _ = holder.get_archive(path)
                with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
                    member = archive.extractfile(archive.getmembers()[0])
                    _EXTENTS[key] = extents_of(member.read()) if member else Extents()
            except (docker.errors.DockerException, tarfile.TarError, IndexError):
                _EXTENTS[key] = Extents()
            finally:
                with contextlib.suppress(docker.errors.DockerException):
                    holder.remove(force=True)
        return _EXTENTS[key]

    def counting_tool(self) -> str:
        image = self._check_image()
        label = str((image.labels or {}).get("org.dbperf.valgrind-version", ""))
        if label:
            return label
        raise ServerError(
            f"image '{self.image}' has no valgrind, which cost mode needs inside the container: rebuild it with "
            "tools/build-images.sh --force"
        )

    def _container(
        self, command: list[str], mounts: list[tuple[Path, str, str]], *, init: bool = False
    ) -> DockerContainer:
        container = DockerContainer(self.image).with_command(command)
        for host, inside, mode in mounts:
            container = container.with_volume_mapping(str(host), inside, mode)
        kwargs: dict[str, Any] = {
            "network_mode": "host",
            "labels": {LABEL: "true", OWNER_LABEL: str(os.getpid()), "org.dbperf.server": self.server.name},
        }
        if self.server.cpuset:
            kwargs["cpuset_cpus"] = self.server.cpuset
        if self.server.cpus:
            kwargs["nano_cpus"] = int(self.server.cpus * 1e9)
        if self.server.memory_limit:
            kwargs["mem_limit"] = self.server.memory_limit
        if init:  # valgrind must not be the container's PID 1 (vgdb cannot reach it there)
            kwargs["init"] = True
        return container.with_kwargs(**kwargs)

    def initialize(self, datadir: Path, credentials: DatasetCredentials) -> None:
        self._check_image()
        datadir.mkdir(parents=True, exist_ok=True)
        tool = "mariadb-install-db" if self.server.flavour == "mariadb" else "mysqld"
        command = [tool, *init_args(self.server.flavour, Path(DATA))]
        container = self._container(command, [(datadir, DATA, "rw")])
        container.start()
        space = workspace.current()
        space.track_container(container.get_wrapped_container().id)
        try:
            result = container.get_wrapped_container().wait(timeout=300)
            if int(result.get("StatusCode", 1)) != 0:
                out, err = container.get_logs()
                tail = init_failure((out + err).decode(errors="replace"))
                raise ServerError(f"initialising {self.image} datadir failed: {tail}")
        finally:
            container.stop()
            space.untrack_container(container.get_wrapped_container().id)
        bootstrap(self, datadir, credentials)

    @contextmanager
    def serve(self, launch: Launch) -> Iterator[ContainerInstance]:
        datadir = launch.needed_datadir("container")
        callgrind = launch.callgrind
        self._check_image()
        with contextlib.suppress(ServerError):
            sweep_containers()
        space = workspace.current()
        run_dir = space.make("container")
        container: DockerContainer | None = None
        try:
            if callgrind is not None:
                self.counting_tool()  # a clear error when the image has no valgrind
            cnf = write_cnf(run_dir / "my.cnf", self.server, launch.server_variables(self.server.flavour))
            cnf.chmod(0o644)
            port = free_port()
            binary = "mariadbd" if self.server.flavour == "mariadb" else "mysqld"
            command = [
                binary,
                f"--defaults-file={CNF}",
                f"--datadir={DATA}",
                f"--port={port}",
                "--bind-address=127.0.0.1",
                f"--socket={DATA}/server.sock",
                f"--pid-file={DATA}/server.pid",
                "--user=root",
            ]
            mounts = [(datadir, DATA, "rw"), (cnf, CNF, "ro")]
            out_dir = run_dir / "callgrind"
            if callgrind is not None:
                out_dir.mkdir()
                out_dir.chmod(0o777)
                command = [*callgrind.argv(COUNTS), *command]
                mounts.append((out_dir, COUNTS, "rw"))
            container = self._container(command, mounts, init=callgrind is not None)
            for name, value in (server_environment() if callgrind is not None else {}).items():
                container = container.with_env(name, value)
            try:
                container.start()
            except docker.errors.DockerException as exc:
                raise ServerError(f"cannot start a container from {self.image}: {exc}") from exc
            space.track_container(container.get_wrapped_container().id)
            user, password = launch.credentials.user, launch.credentials.password
            starting = ContainerInstance(Endpoint("127.0.0.1", port, user, password), container, "")
            version, endpoint = launch.ready(
                self.server, port, self.image, alive=starting.alive, log_tail=starting.error_log_tail
            )
            control = None
            if callgrind is not None:
                control = Control(out_dir, None, ["docker", "exec", container.get_wrapped_container().id])
            yield ContainerInstance(endpoint, container, version, control)
        finally:
            if container is not None:
                _stop_container(container, grace_s=5 if callgrind else 60)
                with contextlib.suppress(docker.errors.DockerException, AttributeError):
                    space.untrack_container(container.get_wrapped_container().id)
            shutil.rmtree(run_dir, ignore_errors=True)


def _stop_container(container: DockerContainer, grace_s: int = 60) -> None:
    """Stop with SIGTERM (clean InnoDB shutdown, needed for snapshots), then remove."""
    with contextlib.suppress(docker.errors.DockerException):
        container.get_wrapped_container().stop(timeout=grace_s)
    with contextlib.suppress(docker.errors.DockerException):
        container.stop()
