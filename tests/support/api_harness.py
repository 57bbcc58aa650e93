"""A ready-made runtime and tokens for HTTP tests: an in-memory ledger, short-term memory,
profile views, recall over the in-memory backend, the sync store, and tokens signed with a
test key.

It is the `Runtime` that `api.bootstrap` opens in production, built by hand from in-memory
parts, so e2e tests drive the real routes over `httpx.ASGITransport` without a server.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Generator, Mapping
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import httpx
import jwt
from fastapi import FastAPI
from pydantic import SecretStr
from support.key_stores import PinnedSubjectIdKeys

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.extraction.rules.routed_guidance import built_in_routes
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.import_positions import InMemoryImportPositions
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.in_memory.sync_store import InMemorySyncStore
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.adapters.sqlite.queue_store import SqliteQueueStore
from factledger.api.bootstrap.judgement import (
    learned_judge,
    safety_screens,
    tentative_reader,
)
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role, SubjectClaim, TokenRequest
from factledger.api.http.auth import mint_token as sign
from factledger.api.settings import AuthSettings, JwtKeySettings
from factledger.application.clocks import Clock
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.guidance_catalogue import GuidanceCatalogue
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.application.recall.ledger_forget_source import LedgerForgets
from factledger.application.recall.ledger_sources import LedgerRecallSources, LedgerSessionRecorder
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.turn_reads import LedgerTurns
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.domain.values import ProfileSchema
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.projections.review_queue.reader import StoreReviewQueue

TEST_SECRET = "factledger-test-signing-key-0123456789abcdef"
TEST_AUTH = AuthSettings(
    issuer="platform-test",
    audience="factledger",
    keys=(JwtKeySettings(kid="test", algorithm="HS256", secret=SecretStr(TEST_SECRET)),),
)


# Recall's budgets in the tests' ports unless they ask for others: a test asks what recall
# answers, not how fast, and two busy cores have run a recall past the product's 1 s. The
# budgets' own tests, and those of a stalled backend, ask for the product's (`RecallPolicies()`).
UNHURRIED = RecallPolicies(RecallPolicy(recall_budget_s=30.0, context_budget_s=30.0))


def build_ports(
    clock: Clock,
    *,
    memory: MemoryBackend | None = None,
    schemas: Mapping[str, ProfileSchema] | None = None,
    policies: RecallPolicies = UNHURRIED,
    judge: SentenceJudge | None = None,
) -> Runtime:
    """The embedded default in memory; `memory` replaces the backend (e.g. a stalling one);
    `schemas`: the kinds' profile schemas the ledger checks values against; `policies`:
    recall's, `UNHURRIED` unless given; `judge`: the shipped learned judge unless given.
    Messages and fields are screened as `serve` screens them: the detectors, then (messages
    only) the shipped secret head, then the shipped instruction check over the answer judge's
    embedder."""
    judge = judge or learned_judge()
    ledger = Ledger(
        popo_env(),
        clock=clock,
        keys=PinnedSubjectIdKeys(InMemoryKeyStore()),
        tentative=tentative_reader(judge),
        schemas=schemas,
    )
    buffer = InMemorySessionBuffer()
    screens = safety_screens(DetectorSafetyFilter(), judge)
    sessions = ShortTermMemory(
        SessionPorts(
            buffer=buffer,
            safety=screens.messages,
            recorder=LedgerSessionRecorder(ledger),
            clock=clock,
            guidance=GuidanceCatalogue.merged(built_in_routes(), ()),
        )
    )
    backend = ValidatingMemoryBackend(
        memory
        or InMemoryMemoryBackend(extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=clock)
    )
    forgets = LedgerForgets(ledger)
    recall = Recall(
        RecallPorts(
            backend=backend,
            sources=LedgerRecallSources(ledger),
            policies=policies,
            forgets=forgets,
            turns=LedgerTurns(ledger, forgets),
        )
    )
    views = InMemoryViewStore("profile")
    projection = ProfileProjection(views)
    queue = ReviewQueueProjection(SqliteQueueStore(":memory:"))
    return Runtime(
        ledger=ledger,
        views=views,
        projection=projection,
        profiles=ViewStoreProfileReader(views),
        follower=Follower(ledger, [projection, queue]),
        queue=StoreReviewQueue(queue.store),
        queue_projection=queue,
        backend=backend,
        sessions=sessions,
        session_buffer=buffer,
        recall=recall,
        sync_store=InMemorySyncStore(),
        imports=InMemoryImportPositions(),
        judge=judge,
        safety=screens.fields,
    )


def token(
    role: Role,
    *,
    tenant: str = "t1",
    principal_id: str | None = None,
    kind: str | None = None,
    ref: str | None = None,
    ttl: timedelta = timedelta(minutes=30),
    auth: AuthSettings = TEST_AUTH,
    subject_id: str | None = None,
) -> str:
    subject = SubjectClaim(kind=kind, ref=ref) if kind and ref else None
    if subject_id is not None:
        subject = SubjectClaim(subject_id=subject_id)
    request = TokenRequest(
        role=role,
        tenant=tenant,
        principal_id=principal_id or f"{role.value}-1",
        subject=subject,
        ttl=ttl,
    )
    return sign(auth, request)


def bearer(jwt: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {jwt}"}


@asynccontextmanager
async def asgi_client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """A client that calls `app` in process, as `http://api`."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


CHANNEL_ID = "chat-platform"


class RelayedByChannel(httpx.Auth):
    """Sends a request of the agent's on the subject's own id with the channel's service
    token. The subject's id is keyed under the deployment's key, so only the server knows it:
    the flow asks `GET /v1/whoami` with the agent's token first (on the same client)."""

    requires_response_body = True

    def __init__(self, agent_authorization: str, tenant: str) -> None:
        self._agent = agent_authorization
        self._channel = bearer(token(Role.SERVICE, tenant=tenant, principal_id=CHANNEL_ID))

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        whoami = httpx.Request(
            "GET", request.url.copy_with(path="/v1/whoami", query=None), headers=self._agent_headers
        )
        answer = yield whoami
        if answer.status_code != 200:  # the agent's own answer (401, 503) is the test's
            request.headers["Authorization"] = self._agent
        else:
            subject_id = json.loads(answer.content)["subject_id"]
            path = request.url.path.replace("/v1/subjects/me/", f"/v1/subjects/{subject_id}/")
            request.url = request.url.copy_with(path=path)
            request.headers["Authorization"] = self._channel["Authorization"]
        yield request

    @property
    def _agent_headers(self) -> dict[str, str]:
        return {"Authorization": self._agent}


def relayed(
    message: Mapping[str, Any] | None, headers: Mapping[str, str]
) -> tuple[dict[str, str], httpx.Auth | None]:
    """With which token a line is appended: the subject's lines come from the channel that
    heard them (the platform's service token, on the subject's own id), the agent's with the
    agent's token. Other headers (an `Idempotency-Key`) are kept. Pass both to the request:
    `http.post(url, json=message, headers=headers, auth=auth)`."""
    if message is None or message.get("role") != "subject":
        return dict(headers), None
    authorization = headers["Authorization"]
    claims = jwt.decode(authorization.split()[1], options={"verify_signature": False})
    if claims["role"] != Role.AGENT.value:
        return dict(headers), None
    kept = {k: v for k, v in headers.items() if k != "Authorization"}
    return kept, RelayedByChannel(authorization, claims["tenant"])


def line(url: str, message: Mapping[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
    """`http.post(**line(url, message, headers))`: a line appended by whoever may write it."""
    who, auth = relayed(message, headers)
    sent: dict[str, Any] = {"url": url, "json": message, "headers": who}
    if auth is not None:
        sent["auth"] = auth
    return sent
