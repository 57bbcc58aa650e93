"""A command's saved response commits with its events on PostgreSQL (ADR 0027): a process
that dies right after the ledger's commit, before it could save the response, leaves the
response saved all the same, so the retry replays it and runs nothing; a save that fails
leaves neither the events nor the response."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.approvals import approve, proposed
from support.approvals import rendered as render

from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres.ledger_recorder import GroupCommitRecorder
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import (
    CommandResult,
)
from factledger.application.ledger.idempotency import ClaimStatus, IdempotencyScope, JsonBody
from factledger.application.ledger.responses import PendingResponse, responding
from factledger.domain.subject import Subject
from factledger.testing.ledger_stores import LedgerStore, make_store, open_ledger

pytestmark = pytest.mark.integration
TENANT = "acme"
FINGERPRINT = "f" * 64


@pytest.fixture
async def stores(
    postgres: PostgresLocation, tmp_path: Path
) -> AsyncIterator[tuple[LedgerStore, PostgresIdempotencyStore]]:
    store = make_store("postgres", workdir=tmp_path, postgres=postgres)
    with store.resources:
        saved = await PostgresIdempotencyStore.connect(
            postgres.conninfo, schema=store.env["POSTGRES_SCHEMA"]
        )
        try:
            yield store, saved
        finally:
            await saved.close()


async def test_a_response_saved_with_its_events_survives_a_crash_before_the_reply(
    stores: tuple[LedgerStore, PostgresIdempotencyStore],
) -> None:
    store, saved = stores
    with open_ledger(store) as ledger:
        subject_id, change_id = await asyncio.to_thread(proposed, ledger)
        scope = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000001")
        assert (await saved.claim(scope, FINGERPRINT)).status is ClaimStatus.CLAIMED
        pending = PendingResponse(scope, FINGERPRINT, time.time() + 60, render)
        with responding(pending):
            result = await asyncio.to_thread(ledger.approve_change, approve(subject_id, change_id))
        # The process "dies" here: it never calls `complete`.
        assert pending.written
        assert pending.body == {"version": result.subject_version, "position": result.position}

        retry = await saved.claim(scope, FINGERPRINT)
        assert retry.status is ClaimStatus.REPLAY
        assert retry.body == pending.body
        assert ledger.subject(TENANT, subject_id).version == result.subject_version


async def test_a_failed_save_leaves_neither_the_events_nor_the_response(
    stores: tuple[LedgerStore, PostgresIdempotencyStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, saved = stores
    with open_ledger(store) as ledger:
        subject_id, change_id = await asyncio.to_thread(proposed, ledger)
        version = ledger.subject(TENANT, subject_id).version
        scope = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000002")
        assert (await saved.claim(scope, FINGERPRINT)).status is ClaimStatus.CLAIMED

        def broken(subject: Subject, result: CommandResult) -> JsonBody:
            raise RuntimeError("the response could not be built")

        recorder = ledger.recorder
        assert isinstance(recorder, GroupCommitRecorder)
        pending = PendingResponse(scope, FINGERPRINT, time.time() + 60, broken)
        with responding(pending), pytest.raises(RuntimeError):
            await asyncio.to_thread(ledger.approve_change, approve(subject_id, change_id))
        assert not pending.written
        assert ledger.subject(TENANT, subject_id).version == version
        again = await saved.claim(scope, FINGERPRINT)
        assert again.status is ClaimStatus.IN_PROGRESS  # still only the claim, no body
