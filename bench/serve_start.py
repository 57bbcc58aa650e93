"""Cold start of `factledger serve`: from launch to the first 200 on `/readyz`, on loopback.

Each start gets a fresh data directory and a free loopback port; the embedder's graph cache
(when asked for) lives in the bench's own folder, so the first start fills it and the others
read it, and the user's cache is never touched. Any `factledger` executable can be timed, so
an older install gives the figures to compare with.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

READY_TIMEOUT_S = 120.0
POLL_S = 0.01


def default_executable() -> Path:
    """The `factledger` script installed beside this interpreter."""
    return Path(sys.executable).parent / "factledger"


def measure_serve_start(executable: Path, workdir: Path, *, runs: int, cache: bool) -> list[float]:
    """Seconds from launch to ready, one per start, in order."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(workdir / "user-cache"),
        "FACTLEDGER_LOG_JSON": "true",
    }
    if cache:
        env["FACTLEDGER_EMBEDDER__CACHE_DIR"] = str(workdir / "graph-cache")
    else:
        # A directory cannot live under a file: the embedder compiles in memory every start.
        blocker = workdir / "no-cache"
        blocker.write_bytes(b"")
        env["FACTLEDGER_EMBEDDER__CACHE_DIR"] = str(blocker / "cache")
    return [
        _one_start(executable, {**env, "FACTLEDGER_DATA_DIR": str(workdir / f"data-{run}")})
        for run in range(runs)
    ]


def _one_start(executable: Path, env: dict[str, str]) -> float:
    port = _free_port()
    started = time.perf_counter()
    process = subprocess.Popen(  # noqa: S603 - a path the operator chose, no shell
        [str(executable), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return _wait_until_ready(port, process, started)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_ready(port: int, process: subprocess.Popen[bytes], started: float) -> float:
    url = f"http://127.0.0.1:{port}/readyz"
    with httpx.Client(timeout=1.0) as client:
        while time.perf_counter() - started < READY_TIMEOUT_S:
            if process.poll() is not None:
                raise RuntimeError(f"factledger serve exited with {process.returncode}")
            try:
                if client.get(url).status_code == httpx.codes.OK:
                    return time.perf_counter() - started
            except httpx.TransportError:
                pass
            time.sleep(POLL_S)
    raise TimeoutError(f"not ready within {READY_TIMEOUT_S:.0f} s")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def summary(seconds: list[float]) -> str:
    """Every start in order, then the median of all and of all but the first."""
    starts = ", ".join(f"{s:.2f}" for s in seconds)
    rest = statistics.median(seconds[1:]) if len(seconds) > 1 else float("nan")
    return (
        f"starts (s, in order): {starts}\n"
        f"median: {statistics.median(seconds):.2f} s; median after the first: {rest:.2f} s"
    )
