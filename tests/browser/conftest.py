"""Browser tests: the console in the system's headless Chromium (Debian's `chromium`).

Skipped, saying why, only where that browser is not installed (`.ci/run` installs it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from support.api_harness import TEST_AUTH, build_ports
from support.browser import CHROMIUM, Console, chromium, serve
from support.console_seed import seed_dead_letter, seed_queue

from factledger.api.console.app import create_app
from factledger.api.settings import RateLimitSettings
from factledger.testing.manual_clock import ManualClock

if not CHROMIUM.exists():
    pytest.skip(
        f"no browser: {CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True
    )

from playwright.async_api import Browser, BrowserContext, async_playwright


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright, chromium(playwright) as launched:
        yield launched


@pytest.fixture
async def console() -> AsyncIterator[Console]:
    clock = ManualClock()
    ports = build_ports(clock)
    seeded = seed_queue(ports, clock)
    item = await seed_dead_letter(ports, seeded.subject_id)
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    with serve(app) as base_url:
        yield Console(base_url, ports, seeded, item)


@pytest.fixture
async def context(browser: Browser, console: Console) -> AsyncIterator[BrowserContext]:
    """A fresh context (no cookies) at a laptop's screen size."""
    fresh = await browser.new_context(
        base_url=console.base_url, viewport={"width": 1366, "height": 800}
    )
    fresh.set_default_timeout(10_000)
    yield fresh
    await fresh.close()
