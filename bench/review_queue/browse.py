"""The queue's pages timed in the system's headless Chromium: the console served by uvicorn
in a thread of this process (the app and runtime the product composes), a reviewer signed in,
each page loaded `runs` times after a warm-up. A page's time is the browser's own navigation
timing, from the request's start to the end of the `load` event: the server's work (the
queue's SQL, the profiles, the evidence in context), the transfer and the rendering. The
count each page states is read from it and compared with the seed's tally."""

from __future__ import annotations

import asyncio
import re
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

import uvicorn
from fastapi import FastAPI

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
_COUNT = re.compile(r"[0-9][0-9,]*")


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    params: dict[str, str]
    # The count the page must state, at the time the page is served (an age filter's count
    # grows as proposals cross its line while the bench runs).
    expected: Callable[[datetime], int]


@dataclass(frozen=True, slots=True)
class Timed:
    scenario: Scenario
    stated: int
    millis: list[float]
    # Of each load: from the request's start to the response's first byte (the server's
    # work, as the browser saw it); the rest is transfer, parsing and rendering.
    server_millis: list[float]
    # The tally just before and just after the page whose count was read: a count that moves
    # with time may be either (both equal for every other page).
    tallied: tuple[int, int]
    # Of each load: to the response's last byte, and to the DOM's being ready (parsed, its
    # deferred script run); the rest to `load` is the rendering and the load event.
    response_millis: list[float]
    dom_millis: list[float]
    body_bytes: int  # the page's HTML, decoded
    # Of each load: to `domInteractive` (the document parsed), and to the end of
    # `DOMContentLoaded` (its script run) is `dom_millis`.
    interactive_millis: list[float] = field(default_factory=list)
    # Opening a row's evidence in context on a freshly loaded page: from setting it open to
    # its fragment in the document (empty where the page quotes nothing, or carries the
    # evidence in itself).
    opened_millis: list[float] = field(default_factory=list)

    @staticmethod
    def _p95(values: list[float]) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    @property
    def server_p95(self) -> float:
        return self._p95(self.server_millis)

    @property
    def response_p50(self) -> float:
        return statistics.median(self.response_millis)

    @property
    def dom_p50(self) -> float:
        return statistics.median(self.dom_millis)

    @property
    def interactive_p50(self) -> float:
        return statistics.median(self.interactive_millis)

    @property
    def opened(self) -> tuple[float, float] | None:
        """Opening an item's evidence: p50 and p95 (None: nothing was fetched on opening)."""
        if not self.opened_millis:
            return None
        return statistics.median(self.opened_millis), self._p95(self.opened_millis)

    @property
    def p50(self) -> float:
        return statistics.median(self.millis)

    @property
    def server_p50(self) -> float:
        return statistics.median(self.server_millis)

    @property
    def p95(self) -> float:
        return self._p95(self.millis)

    @property
    def exact(self) -> bool:
        low, high = sorted(self.tallied)
        return low <= self.stated <= high


@contextmanager
def served(app: FastAPI) -> Iterator[str]:
    """The app on a loopback port until the block ends; yields its base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="queue-bench-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the console did not start")
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def time_pages(
    base_urls: dict[str, str], token: str, scenarios: list[Scenario], *, runs: int
) -> dict[str, list[Timed]]:
    """Each scenario's page on every served variant (name: base URL), the variants taking
    turns load by load (the first of them changes every load), so machine noise falls on all
    alike; a variant's figures are comparable with the others' of the same run."""
    return asyncio.run(_time_pages(base_urls, token, scenarios, runs))


# The load's navigation timing: its total, the server's part (request start to first byte),
# the response's end, DOM ready, the document's size as decoded, and the document parsed.
_TIMING = (
    "() => { const n = performance.getEntriesByType('navigation')[0];"
    " return [n.loadEventEnd - n.startTime, n.responseStart - n.requestStart,"
    " n.responseEnd - n.startTime, n.domContentLoadedEventEnd - n.startTime,"
    " n.decodedBodySize, n.domInteractive - n.startTime]; }"
)
# Opens the page's `index`-th evidence in context that is fetched on opening and waits for
# its fragment (queue.js marks it `data-loaded=yes`); -1 where there is none to fetch.
_OPEN = """async (index) => {
  const all = Array.from(document.querySelectorAll('details.in-context:not([data-loaded])'))
    .filter((details) => details.querySelector(':scope > .context'));
  if (!all.length) { return -1; }
  const details = all[index % all.length];
  const started = performance.now();
  await new Promise((done) => {
    new MutationObserver((_, watching) => {
      if (details.getAttribute('data-loaded') === 'yes') { watching.disconnect(); done(); }
    }).observe(details, { attributes: true });
    details.open = true;
  });
  return performance.now() - started;
}"""


async def _signed_in(browser: Browser, base_url: str, token: str) -> Page:
    context = await browser.new_context(base_url=base_url)
    page = await context.new_page()
    await page.goto("/console/sign-in")
    await page.get_by_label("Platform token").fill(token)
    async with page.expect_response(lambda r: r.request.method == "POST"):
        await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_load_state()
    return page


async def _fresh(browser: Browser, page: Page, base_url: str, token: str) -> Page:
    """A new tab, signed in again, the old one's context closed: a tab navigated hundreds of
    times keeps the documents it left (its renderer grew past 1 GB in a run), and their
    collection would stall the loads being timed; and a console session lasts 15 minutes,
    which a loaded machine's run outlasts."""
    fresh = await _signed_in(browser, base_url, token)
    await page.context.close()
    return fresh


async def _opened(page: Page, url: str, runs: int) -> list[float]:
    """Opening an evidence in context `runs` times, each on a freshly loaded page (nothing
    when the page fetches none on opening)."""
    millis: list[float] = []
    for run in range(runs):
        await page.goto(url, wait_until="load")
        taken = float(await page.evaluate(_OPEN, run))
        if taken < 0:
            return []
        millis.append(taken)
    return millis


async def _time_pages(
    base_urls: dict[str, str], token: str, scenarios: list[Scenario], runs: int
) -> dict[str, list[Timed]]:
    from playwright.async_api import async_playwright  # the lab's browser driver, lazily

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            pages = {name: await _signed_in(browser, url, token) for name, url in base_urls.items()}
            names = list(pages)
            timed: dict[str, list[Timed]] = {name: [] for name in names}
            for scenario in scenarios:
                url = f"/console/queue?{urlencode(scenario.params)}"
                pages = {
                    name: await _fresh(browser, page, base_urls[name], token)
                    for name, page in pages.items()
                }
                for page in pages.values():
                    for _ in range(2):  # warm-up: the first load of each also compiles templates
                        await page.goto(url)
                loads: dict[str, list[list[float]]] = {name: [] for name in names}
                tallied_before = scenario.expected(datetime.now(UTC))
                for run in range(runs):
                    tallied_before = scenario.expected(datetime.now(UTC))
                    for name in names[run % len(names) :] + names[: run % len(names)]:
                        await pages[name].goto(url, wait_until="load")
                        loads[name].append([float(v) for v in await pages[name].evaluate(_TIMING)])
                tallied_after = scenario.expected(datetime.now(UTC))
                opened = {name: await _opened(page, url, runs) for name, page in pages.items()}
                for name, page in pages.items():
                    stated = await page.locator("#queue-count strong").inner_text()
                    found = _COUNT.search(stated)
                    count = -1 if found is None else int(found.group().replace(",", ""))
                    timed[name].append(
                        Timed(
                            scenario,
                            count,
                            [t[0] for t in loads[name]],
                            [t[1] for t in loads[name]],
                            (tallied_before, tallied_after),
                            [t[2] for t in loads[name]],
                            [t[3] for t in loads[name]],
                            int(loads[name][-1][4]),
                            [t[5] for t in loads[name]],
                            opened[name],
                        )
                    )
            return timed
        finally:
            await browser.close()
