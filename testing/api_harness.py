"""Ready-made ports and tokens for HTTP tests: an in-memory ledger, short-term memory, tokens.

The ports bundle mirrors what `api.bootstrap` yields for the embedded default, so e2e tests
drive the real routes over `httpx.ASGITransport` without a server.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import SecretStr

from factledger.adapters.in_memory_session_buffer import InMemorySessionBuffer
from factledger.adapters.ledger_event_store import popo_env
from factledger.adapters.safety_filter import RuleBasedSafetyFilter
from factledger.api.auth import AuthSettings, JwtKeySettings, Role, SubjectClaim, TokenRequest
from factledger.api.auth import mint_token as sign
from factledger.application.commands import RecordSession
from factledger.application.ledger import Ledger
from factledger.application.ports import Clock, SessionBuffer
from factledger.application.session_types import SessionRecording
from factledger.application.sessions import SessionPorts, ShortTermMemory

TEST_SECRET = "factledger-test-signing-key-0123456789abcdef"  # noqa: S105
TEST_AUTH = AuthSettings(
    issuer="platform-test",
    audience="factledger",
    keys=(JwtKeySettings(kid="test", algorithm="HS256", secret=SecretStr(TEST_SECRET)),),
)


class LedgerSessionRecorder:
    """Records an ended session in the ledger (idempotent by session id, like the ledger)."""

    def __init__(self, ledger: Ledger, tenant_of: dict[str, str]) -> None:
        self._ledger = ledger
        self._tenant_of = tenant_of

    async def record_session(self, recording: SessionRecording) -> None:
        subject = recording.subject_id
        tenant = self._tenant_of.get(str(subject)) or self._ledger.repository.get(subject).tenant
        cmd = RecordSession(
            tenant=tenant,
            subject_id=subject,
            session_id=recording.session_id,
            channel=recording.channel,
            started_at=recording.started_at,
            ended_at=recording.ended_at,
            transcript=recording.transcript,
            summary=recording.summary,
            withheld_count=recording.withheld,
        )
        await asyncio.to_thread(self._ledger.record_session, cmd)


@dataclass(frozen=True, slots=True)
class HarnessPorts:
    ledger: Ledger
    sessions: ShortTermMemory
    session_buffer: SessionBuffer
    clock: Clock
    recall: Any = None
    views: Any = None
    dead_letters: Any = None
    memory: Any = None


def build_ports(clock: Clock) -> HarnessPorts:
    ledger = Ledger(popo_env(), clock=clock)
    recorder = LedgerSessionRecorder(ledger, {})
    buffer = InMemorySessionBuffer()
    sessions = ShortTermMemory(
        SessionPorts(
            buffer=buffer,
            safety=RuleBasedSafetyFilter(),
            recorder=recorder,
            clock=clock,
        )
    )
    return HarnessPorts(ledger=ledger, sessions=sessions, session_buffer=buffer, clock=clock)


def token(
    role: Role,
    *,
    tenant: str = "t1",
    principal_id: str | None = None,
    kind: str | None = None,
    ref: str | None = None,
    ttl: timedelta = timedelta(minutes=30),
    auth: AuthSettings = TEST_AUTH,
) -> str:
    subject = SubjectClaim(kind=kind, ref=ref) if kind and ref else None
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
