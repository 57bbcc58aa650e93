"""Steps the in-process HTTP tests share: a lead registered, a session recorded in the lead's
own words, the sync run once. The lead is `lead`/`crm-1`, the agent's token is bound to it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from support.api_harness import bearer, line, token

from factledger.api.bootstrap.proposals import kind_feeds, model_actor
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.api.settings import Settings
from factledger.application.memory.ports import Extractor
from factledger.application.review.proposer import SessionProposer
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def sync(ports: Runtime) -> None:
    """One pass of the sync over the whole ledger; nothing may end dead."""
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    report = await SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend)).run_once()
    assert report.dead == 0


async def a_lead(http: httpx.AsyncClient) -> str:
    """The lead registered by the service; its subject id."""
    body = {"kind": "lead", "external_ref": "crm-1"}
    subject = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
    return str(subject["subject_id"])


async def saying(http: httpx.AsyncClient, text: str, session_id: str = "wa-1") -> None:
    """A WhatsApp session opened by the lead's agent, with one message of the lead's (relayed by
    the channel that heard it), left open."""
    start = {"session_id": session_id, "channel": "whatsapp"}
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
    message = {"role": "subject", "text": text}
    url = f"/v1/subjects/me/sessions/{session_id}/messages"
    await ok(await http.post(**line(url, message, AGENT)))


async def said(http: httpx.AsyncClient, text: str, session_id: str = "wa-1") -> None:
    """As `saying`, then the session ended (recorded in the ledger)."""
    await saying(http, text, session_id)
    url = f"/v1/subjects/me/sessions/{session_id}/end"
    await ok(await http.post(url, json={}, headers=AGENT))


async def conversation(
    http: httpx.AsyncClient,
    agent: dict[str, str],
    start: dict[str, str],
    lines: Sequence[tuple[str, str]],
) -> None:
    """A session opened by `agent` (`start`: its id and channel), each (role, text) line
    posted, then ended (recorded in the ledger)."""
    await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=agent), 201)
    url = f"/v1/subjects/me/sessions/{start['session_id']}"
    for role, text in lines:
        await ok(await http.post(**line(f"{url}/messages", {"role": role, "text": text}, agent)))
    await ok(await http.post(f"{url}/end", json={}, headers=agent))


def proposing_worker(ports: Runtime, extractor: Extractor, settings: Settings) -> SyncWorker:
    """The sync worker with the model's proposer reading sessions by `extractor`."""
    assert ports.sync_store is not None
    assert ports.backend is not None
    feed = LedgerEventFeed(ports.ledger)
    model = SessionProposer(ports.ledger, extractor, model_actor(settings), kind_feeds(settings))
    return SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend, proposer=model))
