"""Closed-loop clients of the write path: each sends its next request when the last one
answered, so the rate measured is what the server sustains, not what the clients offer."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import httpx

from factledger.bench.load.agent import Sample, server_timing

MESSAGES_PER_SESSION = 1_000  # well under the buffer's MAX_MESSAGES: a session never fills up
PROPOSALS_PER_END = 2


@dataclass(slots=True)
class Samples:
    """What the clients measured, bounded in count; `stop` ends every client."""

    max_requests: int
    items: list[Sample] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, sample: Sample) -> None:
        self.items.append(sample)
        if len(self.items) >= self.max_requests:
            self.stop.set()


async def timed(
    http: httpx.AsyncClient, route: str, path: str, body: object, headers: dict[str, str]
) -> tuple[Sample, httpx.Response | None]:
    """One POST and what it cost, as the client saw it and inside the app."""
    # As the Python client does: every command carries a fresh Idempotency-Key.
    keyed = {**headers, "Idempotency-Key": uuid.uuid4().hex}
    started = time.perf_counter()
    try:
        response = await http.post(path, json=body, headers=keyed)
    except httpx.TransportError as exc:
        return Sample(route, 0, time.perf_counter() - started, error=type(exc).__name__), None
    elapsed = time.perf_counter() - started
    timing = server_timing(response.headers.get("server-timing"))
    sample = Sample(
        route,
        response.status_code,
        elapsed,
        in_app_s=timing.get("app"),
        use_case_s=timing.get("use"),
        idempotency_s=timing.get("idem"),
    )
    return sample, response


def proposal(field_name: str, quote: str, session_id: str) -> dict[str, object]:
    return {
        "field": field_name,
        "value": {"type": "text", "value": quote},
        "origin": "stated",
        "evidence": {"session_id": session_id, "message_index": 0, "quote": quote},
    }


Client = Callable[[httpx.AsyncClient, str, str, Samples], Coroutine[Any, Any, None]]


async def appender(http: httpx.AsyncClient, subject: str, token: str, samples: Samples) -> None:
    """Appends messages to its own session, starting a new one every thousand."""
    headers = {"Authorization": f"Bearer {token}"}
    base = f"/v1/subjects/{subject}/sessions"
    session = 0
    while not samples.stop.is_set():
        session += 1
        session_id = f"w-{subject[:8]}-{session}"
        await http.post(base, json={"session_id": session_id, "channel": "chat"}, headers=headers)
        for n in range(MESSAGES_PER_SESSION):
            if samples.stop.is_set():
                return
            body = {"role": "subject", "text": f"We buy from Acme, order {n}."}
            sample, _ = await timed(http, "append", f"{base}/{session_id}/messages", body, headers)
            samples.add(sample)


async def ender(http: httpx.AsyncClient, subject: str, token: str, samples: Samples) -> None:
    """Starts a session, appends one message and ends it with two proposals; only the end is
    a sample (the start and the append are the set-up of the next end)."""
    headers = {"Authorization": f"Bearer {token}"}
    base = f"/v1/subjects/{subject}/sessions"
    session = 0
    while not samples.stop.is_set():
        session += 1
        session_id = f"e-{subject[:8]}-{session}"
        await http.post(base, json={"session_id": session_id, "channel": "chat"}, headers=headers)
        said = {"role": "subject", "text": "We buy from Acme and pay 900 EUR a month."}
        await http.post(f"{base}/{session_id}/messages", json=said, headers=headers)
        end = {
            "proposals": [
                proposal("supplier", "Acme", session_id),
                proposal("budget", "900 EUR", session_id),
            ][:PROPOSALS_PER_END]
        }
        sample, _ = await timed(http, "end", f"{base}/{session_id}/end", end, headers)
        samples.add(sample)


async def drive(
    base_url: str,
    client: Client,
    subjects: list[tuple[str, str]],
    *,
    seconds: float,
    max_requests: int,
) -> tuple[list[Sample], float]:
    """Runs one client per (subject id, token) for `seconds` or `max_requests` samples."""
    size = len(subjects) + 2
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60.0) as http:
        samples = Samples(max_requests)
        started = time.perf_counter()
        tasks = [asyncio.create_task(client(http, s, t, samples)) for s, t in subjects]
        try:
            await asyncio.wait_for(samples.stop.wait(), timeout=seconds)
        except TimeoutError:
            samples.stop.set()
        active_s = time.perf_counter() - started
        await asyncio.wait(tasks, timeout=60.0)
        for task in tasks:
            task.cancel()
    return samples.items, active_s
