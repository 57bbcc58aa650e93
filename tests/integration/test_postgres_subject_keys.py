"""PostgreSQL tables made when session ids and idempotency keys were not scoped by subject:
opening the stores rekeys the session buffer (keeping open sessions) and drops saved
responses that could answer for the wrong subject."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import psycopg
import pytest
from psycopg import sql
from support.stores import new_schema

from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.idempotency import ClaimStatus, IdempotencyScope
from factledger.application.sessions.types import ActiveSession, SessionId, SessionKey
from factledger.domain.transcript import Channel, Message, Role

pytestmark = pytest.mark.integration

SUBJECT_A = UUID("00000000-0000-0000-0000-00000000000a")
SUBJECT_B = UUID("00000000-0000-0000-0000-00000000000b")
_UNKEYED_BUFFER = (
    """CREATE TABLE {s}.short_term_sessions (
        session_id text PRIMARY KEY, subject_id uuid NOT NULL, channel text NOT NULL,
        started_at timestamptz NOT NULL, message_count integer NOT NULL DEFAULT 0,
        withheld integer NOT NULL DEFAULT 0)""",
    """CREATE TABLE {s}.short_term_messages (
        session_id text NOT NULL REFERENCES {s}.short_term_sessions ON DELETE CASCADE,
        idx integer NOT NULL, role text NOT NULL, text text NOT NULL, at timestamptz,
        message_id text, PRIMARY KEY (session_id, idx))""",
    """CREATE UNIQUE INDEX short_term_message_ids
        ON {s}.short_term_messages (session_id, message_id)""",
    """INSERT INTO {s}.short_term_sessions
        VALUES ('s-1', '00000000-0000-0000-0000-00000000000a', 'voice', now(), 1, 0)""",
    "INSERT INTO {s}.short_term_messages VALUES ('s-1', 0, 'subject', 'kept', NULL, 'm-1')",
)
_UNKEYED_RESPONSES = (
    """CREATE TABLE {s}.idempotency_keys (tenant text NOT NULL, principal text NOT NULL,
        key text NOT NULL, fingerprint text NOT NULL, body jsonb,
        expires_at double precision NOT NULL, PRIMARY KEY (tenant, principal, key))""",
    "INSERT INTO {s}.idempotency_keys VALUES ('t1', 'bot', 'key-00000001', 'fp', '{{}}', 9e12)",
)


def _run(location: PostgresLocation, schema: str, statements: tuple[str, ...]) -> None:
    with psycopg.connect(location.conninfo, autocommit=True) as conn:
        for statement in statements:
            conn.execute(sql.SQL(statement).format(s=sql.Identifier(schema)))


async def test_a_buffer_keyed_by_session_id_alone_is_rekeyed_by_subject(
    postgres: PostgresLocation,
) -> None:
    schema = new_schema(postgres, "stm_old")
    _run(postgres, schema, _UNKEYED_BUFFER)
    buffer = await PostgresSessionBuffer.connect(postgres.conninfo, schema=schema)
    try:
        a1 = SessionKey(SUBJECT_A, SessionId("s-1"))
        assert [m.text for m in await buffer.messages(a1)] == ["kept"]
        assert await buffer.append(a1, Message(Role.SUBJECT, "kept"), message_id="m-1") == 0
        b1 = ActiveSession(SessionId("s-1"), SUBJECT_B, Channel.CHAT, datetime.now(UTC))
        opened = await buffer.open(b1)
        assert (opened.subject_id, opened.channel, opened.message_count) == (
            SUBJECT_B,
            Channel.CHAT,
            0,
        )
        await buffer.discard(a1)
        assert await buffer.get(b1.key) is not None
    finally:
        await buffer.close()
    # Opening the rekeyed tables again changes nothing.
    again = await PostgresSessionBuffer.connect(postgres.conninfo, schema=schema)
    try:
        assert await again.get(b1.key) is not None
    finally:
        await again.close()


async def test_saved_responses_keyed_without_the_subject_are_never_replayed(
    postgres: PostgresLocation,
) -> None:
    schema = new_schema(postgres, "idem_old")
    _run(postgres, schema, _UNKEYED_RESPONSES)
    store = await PostgresIdempotencyStore.connect(postgres.conninfo, schema=schema)
    try:
        claim = await store.claim(IdempotencyScope("t1", "bot", SUBJECT_A, "key-00000001"), "fp")
        assert claim.status is ClaimStatus.CLAIMED
    finally:
        await store.close()
