"""Requests on subjects with long histories: the same request on subjects of 10, 1,000 and
10,000 events should cost the same. Appends only check the subject's tenant (a cache); a
session end and a decision load the subject itself (one load each, from the aggregate cache,
whose copy for a command copies containers, not their items)."""

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


async def ends_and_decisions_by_size(
    http: httpx.AsyncClient, subjects: dict[int, str], token: str, reviewer: str, rounds: int
) -> tuple[dict[int, list[Sample]], dict[int, list[Sample]]]:
    """Per round and size: a session (start, one message) ended with two proposals, then a
    reviewer's approval of the first; the end and the approval are the samples. Each round
    adds four events to every subject, so the smallest grows from 10 to 10 + 4 x rounds."""
    headers = {"Authorization": f"Bearer {token}"}
    reviewing = {"Authorization": f"Bearer {reviewer}"}
    ends: dict[int, list[Sample]] = {size: [] for size in subjects}
    decisions: dict[int, list[Sample]] = {size: [] for size in subjects}
    for n in range(rounds):
        for size, subject in subjects.items():
            base = f"/v1/subjects/{subject}/sessions"
            session_id = f"history-end-{n}"
            body = {"session_id": session_id, "channel": "chat"}
            (await http.post(base, json=body, headers=headers)).raise_for_status()
            said = {"role": "subject", "text": "We buy from Acme."}
            messages = f"{base}/{session_id}/messages"
            (await http.post(messages, json=said, headers=headers)).raise_for_status()
            # Fields of their own each round: an approval never makes a later proposal stale.
            end = {"proposals": [proposal(f"h{n}{x}", "Acme", session_id) for x in "ab"]}
            sample, response = await timed(http, "end", f"{base}/{session_id}/end", end, headers)
            ends[size].append(sample)
            if response is None or response.status_code != httpx.codes.OK:
                continue
            change_id = response.json()["proposals"][0]["change_id"]
            approve = f"/v1/subjects/{subject}/proposals/{change_id}/approve"
            sample, _ = await timed(http, "decision", approve, {}, reviewing)
            decisions[size].append(sample)
    return ends, decisions


def use_case_median_ms(samples: list[Sample]) -> float | None:
    present = [s.use_case_s for s in samples if s.use_case_s is not None]
    return statistics.median(present) * 1e3 if present else None


def overhead_median_ms(samples: list[Sample]) -> float | None:
    present = [o for s in samples if (o := s.overhead_s) is not None]
    return statistics.median(present) * 1e3 if present else None
