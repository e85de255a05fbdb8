"""What machine a run happened on (CPU, cores, memory, kernel, frequency governor, OS) and
which Python libraries it analysed with.

Stored with every run (`runs.machine`, `runs.libraries`). Deliberately no host name, user or
path.
"""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path

# The Python packages whose versions can move a stored or reported number: statistics,
# frames, the store, figures, the campaign file writer (requirements.lock pins them).
LIBRARIES = ("numpy", "scipy", "pandas", "duckdb", "pyarrow", "matplotlib", "rich", "tomli-w")


def describe() -> dict:
    """Facts about this machine; a value that cannot be read is None."""
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_bytes": _mem_total(),
        "kernel": platform.release(),
        "arch": platform.machine(),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "os": _os_name(),
        "python": platform.python_version(),
        "virtualization": _virtualization(),
    }


def libraries() -> dict:
    """Python's version and that of each of LIBRARIES (None where one is not installed)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip() or None
    except OSError:
        return None


def _cpu_model() -> str | None:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model"):
            return value.strip()
    return platform.processor() or None


def _mem_total() -> int | None:
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            return int(parts[1]) * 1024  # /proc/meminfo is in KiB
    return None


def _os_name() -> str | None:
    try:
        return platform.freedesktop_os_release()["PRETTY_NAME"]
    except (OSError, KeyError):
        return f"{platform.system()} {platform.release()}"


def _virtualization() -> str | None:
    """'hypervisor' when the CPU says it runs under one (x86 cpuinfo flag), else None."""
    for line in (_read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("flags") and " hypervisor" in line:
            return "hypervisor"
    return None
