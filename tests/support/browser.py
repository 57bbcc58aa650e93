"""The console served for a real browser: uvicorn on a loopback port in a thread, and the
system's headless Chromium driven by Playwright (never a browser Playwright downloads).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI
from playwright.async_api import Browser, Playwright
from support.console_seed import Seeded

from factledger.api.bootstrap.runtime import Runtime

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_S = 15.0


@dataclass(frozen=True, slots=True)
class Console:
    """A served console and what it was seeded with."""

    base_url: str
    ports: Runtime
    seeded: Seeded
    dead_letter: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Serves `app` on 127.0.0.1 until the block ends; yields its base URL."""
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="console-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_S
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the console server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=STARTUP_S)


@asynccontextmanager
async def chromium(playwright: Playwright) -> AsyncIterator[Browser]:
    """The system's Chromium, headless; Playwright gives each launch a fresh temporary
    profile (it refuses a `--user-data-dir` argument to `launch`)."""
    browser = await playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
    try:
        yield browser
    finally:
        await browser.close()
