"""The testbed stage: fingerprint the machine and warn when it is too busy to measure.

Baselines are only ever compared on the same fingerprint (CPU model, cores, memory, kernel, disk,
sysbench version, and the container engine for container servers).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import time
from pathlib import Path

from harness.model import Testbed
from harness.workspace import child_environment


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return 0.0


def _disk() -> str:
    """Model (or name) and rotational flag of the block device holding the working directory."""
    try:
        dev = Path.cwd().stat().st_dev
        name = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}").resolve().name
        base = re.sub(r"\d+$", "", name) if not name.startswith("nvme") else re.sub(r"p\d+$", "", name)
        model_file = Path(f"/sys/block/{base}/device/model")
        model = model_file.read_text().strip() if model_file.exists() else base
        rotational = Path(f"/sys/block/{base}/queue/rotational").read_text().strip()
    except OSError:
        return "unknown"
    return f"{model} ({'hdd' if rotational == '1' else 'ssd'})"


def _container_engine() -> str | None:
    if shutil.which("docker") is None:
        return None
    out = subprocess.run(
        ["docker", "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        check=False,
        env=child_environment(),
    )
    return f"docker {out.stdout.strip()}" if out.returncode == 0 and out.stdout.strip() else None


def fingerprint(sysbench_version: str, *, with_engine: bool, hardware_class: str = "") -> Testbed:
    return Testbed(
        cpu_model=_cpu_model(),
        cores=os.cpu_count() or 1,
        memory_gb=_memory_gb(),
        kernel=platform.release(),
        disk=_disk(),
        sysbench_version=sysbench_version,
        container_engine=_container_engine() if with_engine else None,
        hostname=platform.node(),
        hardware_class=hardware_class,
    )


def _cpu_times() -> list[int]:
    return [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]


def preflight(sample_s: float = 0.5) -> list[str]:
    """Warnings about a machine that is too busy for trustworthy numbers (load, steal, other servers)."""
    warnings: list[str] = []
    cores = os.cpu_count() or 1
    load1 = os.getloadavg()[0]
    if load1 > cores * 0.5:
        warnings.append(f"load average {load1:.2f} on {cores} cores: other work will add noise")
    try:
        before = _cpu_times()
        time.sleep(sample_s)
        after = _cpu_times()
        delta = [a - b for a, b in zip(after, before, strict=False)]
        total = sum(delta) or 1
        steal = delta[7] * 100.0 / total if len(delta) > 7 else 0.0
        busy = 100.0 - (delta[3] + delta[4]) * 100.0 / total
        if steal > 5:
            warnings.append(f"CPU steal time {steal:.1f} %: the hypervisor is taking this VM's CPU")
        if busy > 50:
            warnings.append(f"CPU {busy:.0f} % busy before the run started")
    except (OSError, IndexError, ValueError):
        pass
    governor = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if governor.exists() and governor.read_text().strip() not in {"performance"}:
        warnings.append(f"CPU frequency governor is '{governor.read_text().strip()}', not 'performance'")
    return warnings
