"""The console's pages about one subject, as the browser renders them: where a forgotten or
withheld word must appear on none."""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

from playwright.async_api import Page


def subject_pages(base_url: str, subject: UUID | str, changes: Iterable[UUID | str]) -> list[str]:
    """The queue, the subject's page, its sessions, its memory and each change's page."""
    base = f"{base_url}/console"
    return [
        f"{base}/queue",
        f"{base}/subjects/{subject}",
        f"{base}/subjects/{subject}/sessions",
        f"{base}/subjects/{subject}/memory",
        *(f"{base}/subjects/{subject}/proposals/{c}" for c in changes),
    ]


async def rendered(page: Page, urls: Iterable[str]) -> str:
    """Every page of `urls` as the browser rendered it, one after another."""
    seen = []
    for url in urls:
        await page.goto(url)
        await page.wait_for_load_state()
        seen.append(await page.content())
    return "\n".join(seen)
