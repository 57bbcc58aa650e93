"""One `factledger serve` process on loopback for tests that drive it from outside (another
language's client, a framework integration): the embedded default, configured only through the
environment, with tokens signed by the test key."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from support.api_harness import TEST_AUTH, TEST_SECRET

ENTRY = "from factledger.api.cli.main import main; main()"
STARTUP_LIMIT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "FACTLEDGER_DATA_DIR": str(data_dir),
        "FACTLEDGER_AUTH__ENVIRONMENT": "test",
        "FACTLEDGER_AUTH__ISSUER": TEST_AUTH.issuer,
        "FACTLEDGER_AUTH__AUDIENCE": TEST_AUTH.audience,
        "FACTLEDGER_AUTH__KEYS": json.dumps([{"kid": "test", "secret": TEST_SECRET}]),
    }


@contextmanager
def serving(data_dir: Path) -> Iterator[str]:
    """A ready server's base URL; the process is stopped on exit."""
    port = free_port()
    log = data_dir / "serve.log"
    command = [sys.executable, "-c", ENTRY, "serve", "--port", str(port)]
    with log.open("wb") as sink:
        # A file, not a pipe: nobody drains a pipe while the tests run, and a full one blocks.
        process = subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            command, env=environment(data_dir), stdout=subprocess.DEVNULL, stderr=sink
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_ready(base_url, process, log)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=20)


def _wait_until_ready(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"factledger serve exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("factledger serve did not become ready")
