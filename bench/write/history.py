"""Appends on subjects with long histories: the same request on subjects of 10, 1,000 and
10,000 events should cost the same (the tenant check reads a cache, not the stream)."""

from __future__ import annotations

import statistics

import httpx

from factledger.bench.load.agent import Sample
from factledger.bench.write.clients import proposal, timed

PROPOSALS_PER_SEED_END = 49  # with its session, 50 events per save
SIZES = (10, 1_000, 10_000)


def seed_plan(events: int) -> list[int]:
    """Proposals per session end so that registration plus the ends make `events` events
    (to within one save)."""
    remaining, plan = events - 1, []
    while remaining > 1:
        proposals = min(PROPOSALS_PER_SEED_END, remaining - 1)
        plan.append(proposals)
        remaining -= proposals + 1
    return plan


async def seed(http: httpx.AsyncClient, subject: str, token: str, events: int) -> None:
    """Gives a registered subject about `events` events through the API."""
    headers = {"Authorization": f"Bearer {token}"}
    base = f"/v1/subjects/{subject}/sessions"
    for n, proposals in enumerate(seed_plan(events)):
        session_id = f"seed-{n}"
        (
            await http.post(
                base, json={"session_id": session_id, "channel": "chat"}, headers=headers
            )
        ).raise_for_status()
        said = {"role": "subject", "text": "We buy from Acme."}
        messages = f"{base}/{session_id}/messages"
        (await http.post(messages, json=said, headers=headers)).raise_for_status()
        body = {"proposals": [proposal(f"f{p}", "Acme", session_id) for p in range(proposals)]}
        (await http.post(f"{base}/{session_id}/end", json=body, headers=headers)).raise_for_status()


async def appends_by_size(
    http: httpx.AsyncClient, subjects: dict[int, str], token: str, rounds: int
) -> dict[int, list[Sample]]:
    """Sequential appends, the sizes taking turns so that they share the machine's load."""
    headers = {"Authorization": f"Bearer {token}"}
    for subject in subjects.values():
        body = {"session_id": "history", "channel": "chat"}
        (
            await http.post(f"/v1/subjects/{subject}/sessions", json=body, headers=headers)
        ).raise_for_status()
    samples: dict[int, list[Sample]] = {size: [] for size in subjects}
    for n in range(rounds):
        for size, subject in subjects.items():
            path = f"/v1/subjects/{subject}/sessions/history/messages"
            body = {"role": "subject", "text": f"Message {n}."}
            sample, _ = await timed(http, "append", path, body, headers)
            samples[size].append(sample)
    return samples


def median_ms(samples: list[Sample], *, in_app: bool) -> float:
    values = [s.in_app_s if in_app else s.seconds for s in samples]
    present = [v for v in values if v is not None]
    return statistics.median(present) * 1e3 if present else 0.0
