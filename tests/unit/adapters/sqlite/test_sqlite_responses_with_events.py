"""On the embedded default a ledger command's saved response commits with its events, in the
ledger's own file (ADR 0037): a process that dies after the commit leaves the response saved
and the retry replays it (its claim lapsed or not); a render or a write that fails leaves
neither; a key stays refused for another request across both kinds of commands; a forget
deletes a subject's responses in both files."""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from eventsourcing.sqlite import SQLiteConnection, SQLiteConnectionPool
from fastapi import Response
from pydantic import BaseModel
from support.approvals import approve, proposed, rendered

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.api.http.errors import render as render_error
from factledger.api.http.idempotency import Idempotency
from factledger.application.errors import StorageFullError
from factledger.application.ledger.commands import (
    CommandResult,
)
from factledger.application.ledger.idempotency import (
    SWEEP_GRACE_S,
    ClaimStatus,
    IdempotencyScope,
    JsonBody,
    for_ledger_commands,
)
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.responses import PendingResponse, responding
from factledger.domain.subject import Subject

TENANT = "acme"
FINGERPRINT = "f" * 64
BIG = "x" * 20_000  # several pages: a write of it needs new pages


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    ledger = Ledger(sqlite_env(tmp_path / "ledger.sqlite"), keys=InMemoryKeyStore())
    yield ledger
    ledger.close()


NOW = [1_000_000.0]
LEASE_S, TTL_S = 5.0, 100.0


@pytest.fixture
def stores(tmp_path: Path, ledger: Ledger) -> Iterator[SqliteIdempotencyStore]:
    NOW[0] = time.time()
    store = SqliteIdempotencyStore(
        tmp_path / "ledger-idempotency.sqlite",
        lease_s=LEASE_S,
        ttl_s=TTL_S,
        clock=lambda: NOW[0],
        responses_with_events=tmp_path / "ledger.sqlite",
    )
    yield store
    store.close()


async def approved_with(
    ledger: Ledger, scope: IdempotencyScope, render: Callable[[Subject, CommandResult], JsonBody]
) -> tuple[PendingResponse, CommandResult]:
    subject_id, change_id = (
        scope.subject_id,
        next(iter(ledger.subject(TENANT, scope.subject_id).changes)),
    )
    pending = PendingResponse(scope, FINGERPRINT, time.time() + 60, render)
    with responding(pending):
        result = await asyncio.to_thread(ledger.approve_change, approve(subject_id, change_id))
    return pending, result


async def test_the_ledger_store_claims_in_the_ledger_file_and_commits_with_events(
    ledger: Ledger, stores: SqliteIdempotencyStore
) -> None:
    with_events = for_ledger_commands(stores)
    assert getattr(with_events, "commits_with_events", False)
    assert not getattr(stores, "commits_with_events", False)
    subject_id, _ = await asyncio.to_thread(proposed, ledger)
    scope = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000001")
    assert (await with_events.claim(scope, FINGERPRINT)).status is ClaimStatus.CLAIMED

    pending, result = await approved_with(ledger, scope, rendered)
    # The process "dies" here: it never calls `complete`.
    assert pending.written
    assert pending.body == {"version": result.subject_version, "position": result.position}

    retry = await with_events.claim(scope, FINGERPRINT)
    assert retry.status is ClaimStatus.REPLAY
    assert retry.body == pending.body
    # Still so once the dead process's claim has lapsed, which frees the key in this file.
    NOW[0] += LEASE_S + 1
    again = await with_events.claim(scope, FINGERPRINT)
    assert (again.status, again.body) == (ClaimStatus.REPLAY, pending.body)
    # The same key for another request is refused, on either kind of route...
    assert (await with_events.claim(scope, "other")).status is ClaimStatus.MISMATCH
    # ...and the response expires with its time to live.
    NOW[0] += TTL_S
    assert (await with_events.claim(scope, FINGERPRINT)).status is ClaimStatus.CLAIMED


async def test_a_failed_render_leaves_neither_the_events_nor_the_response(
    ledger: Ledger, stores: SqliteIdempotencyStore
) -> None:
    with_events = stores.ledger_commands
    subject_id, _ = await asyncio.to_thread(proposed, ledger)
    version = ledger.subject(TENANT, subject_id).version
    scope = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000002")
    assert (await with_events.claim(scope, FINGERPRINT)).status is ClaimStatus.CLAIMED

    def broken(subject: Subject, result: CommandResult) -> JsonBody:
        raise RuntimeError("the response could not be built")

    with pytest.raises(RuntimeError):
        await approved_with(ledger, scope, broken)
    assert ledger.subject(TENANT, subject_id).version == version
    assert (await with_events.claim(scope, FINGERPRINT)).status is ClaimStatus.IN_PROGRESS


async def test_a_full_disk_at_the_response_is_a_503_and_loses_nothing(
    ledger: Ledger, stores: SqliteIdempotencyStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_events = stores.ledger_commands
    subject_id, _ = await asyncio.to_thread(proposed, ledger)
    version = ledger.subject(TENANT, subject_id).version
    scope = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000003")
    assert (await with_events.claim(scope, FINGERPRINT)).status is ClaimStatus.CLAIMED

    # The ledger's connections may not grow the file: the events fit in pages it has, the
    # large response does not, so the write fails after the events' insert.
    create = SQLiteConnectionPool._create_connection

    def without_room(pool: SQLiteConnectionPool) -> SQLiteConnection:
        conn = create(pool)
        raw: sqlite3.Connection = conn._sqlite_conn
        pages = raw.execute("PRAGMA page_count").fetchone()[0]
        raw.execute(f"PRAGMA max_page_count = {pages}")
        return conn

    monkeypatch.setattr(SQLiteConnectionPool, "_create_connection", without_room)
    full = Ledger(ledger.env, keys=ledger.keys)
    try:
        rendered_after_insert: list[int | None] = []

        def big(subject: Subject, result: CommandResult) -> JsonBody:
            rendered_after_insert.append(result.position)
            return {"padding": BIG, "version": result.subject_version}

        with pytest.raises(StorageFullError) as raised:
            await approved_with(full, scope, big)
        # The events were in (they had positions) when the response failed to fit.
        assert rendered_after_insert
        assert None not in rendered_after_insert
        assert render_error(raised.value).status_code == 503
    finally:
        full.close()
    monkeypatch.undo()
    # Nothing lost, nothing half-written: no events, the key still only claimed.
    assert ledger.subject(TENANT, subject_id).version == version
    assert (await with_events.claim(scope, FINGERPRINT)).status is ClaimStatus.IN_PROGRESS
    # Once there is room, the same command goes through and its response with it.
    pending, result = await approved_with(ledger, scope, rendered)
    assert pending.written
    assert ledger.subject(TENANT, subject_id).version == result.subject_version == version + 1


async def test_a_key_used_by_an_append_first_is_refused_to_a_ledger_command(
    stores: SqliteIdempotencyStore,
) -> None:
    scope = IdempotencyScope(TENANT, "agent-1", uuid.uuid4(), "key-00000004")
    assert (await stores.claim(scope, "append")).status is ClaimStatus.CLAIMED
    await stores.complete(scope, "append", {"index": 0})
    reused = await stores.ledger_commands.claim(scope, FINGERPRINT)
    assert reused.status is ClaimStatus.MISMATCH


async def test_responses_saved_after_their_command_by_an_older_build_still_replay(
    stores: SqliteIdempotencyStore,
) -> None:
    scope = IdempotencyScope(TENANT, "agent-1", uuid.uuid4(), "key-00000005")
    # An older build saved every response in the idempotency file, after the command.
    assert (await stores.claim(scope, FINGERPRINT)).status is ClaimStatus.CLAIMED
    await stores.complete(scope, FINGERPRINT, {"applied": True})
    replay = await stores.ledger_commands.claim(scope, FINGERPRINT)
    assert (replay.status, replay.body) == (ClaimStatus.REPLAY, {"applied": True})


async def test_a_forget_deletes_the_subjects_responses_in_both_files(
    ledger: Ledger, stores: SqliteIdempotencyStore
) -> None:
    subject_id, _ = await asyncio.to_thread(proposed, ledger)
    in_ledger = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000006")
    in_file = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000007")
    await stores.ledger_commands.claim(in_ledger, FINGERPRINT)
    pending, _ = await approved_with(ledger, in_ledger, rendered)
    await stores.release(in_ledger, FINGERPRINT)  # the claim lapses; the response stays
    assert pending.written
    await stores.claim(in_file, FINGERPRINT)
    await stores.complete(in_file, FINGERPRINT, {"index": 0})

    assert await stores.forget_subject(TENANT, subject_id) == 2
    assert (await stores.ledger_commands.claim(in_ledger, FINGERPRINT)).status is (
        ClaimStatus.CLAIMED
    )
    assert (await stores.claim(in_file, FINGERPRINT)).status is ClaimStatus.CLAIMED


async def test_a_forgotten_response_saved_with_its_events_leaves_no_bytes_in_the_files(
    tmp_path: Path, ledger: Ledger, stores: SqliteIdempotencyStore
) -> None:
    subject_id, _ = await asyncio.to_thread(proposed, ledger)
    scope = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000008")
    await stores.ledger_commands.claim(scope, FINGERPRINT)

    def canary(subject: Subject, result: CommandResult) -> JsonBody:
        return {"said": "Canary Gazebo Quartz", "version": result.subject_version}

    pending, _ = await approved_with(ledger, scope, canary)
    assert pending.written

    assert await stores.forget_subject(TENANT, subject_id) == 1
    files = [f for f in tmp_path.iterdir() if f.is_file()]  # noqa: ASYNC240 - a test's own dir
    assert files
    assert [f.name for f in files if b"Canary Gazebo" in f.read_bytes()] == []


class Approved(BaseModel):
    version: int
    position: int | None


async def test_a_key_answered_with_its_events_stays_refused_to_another_request(
    ledger: Ledger, stores: SqliteIdempotencyStore
) -> None:
    subject_id, change_id = await asyncio.to_thread(proposed, ledger)
    scope = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000009")

    def render(subject: Subject, result: CommandResult) -> Approved:
        return Approved(version=result.subject_version, position=result.position)

    async def command() -> Approved:
        result = await asyncio.to_thread(ledger.approve_change, approve(subject_id, change_id))
        return render(result.subject, result)

    request = Idempotency(stores, scope, FINGERPRINT, Response())
    answer = await request.run(command, Approved, render=render)
    # Past the claim's lease: another request with the key (an append's) is still refused...
    NOW[0] += LEASE_S + 1
    assert (await stores.claim(scope, "an append")).status is ClaimStatus.MISMATCH
    # ...and the command's retry replays the answer.
    replay = await stores.ledger_commands.claim(scope, FINGERPRINT)
    assert (replay.status, replay.body) == (ClaimStatus.REPLAY, answer.model_dump(mode="json"))


async def test_responses_saved_with_their_events_are_swept_from_the_ledger_file_once_expired(
    ledger: Ledger, stores: SqliteIdempotencyStore, tmp_path: Path
) -> None:
    subject_id, _ = await asyncio.to_thread(proposed, ledger)
    scope = IdempotencyScope(TENANT, "agent-1", subject_id, "key-00000009")
    await stores.ledger_commands.claim(scope, FINGERPRINT)
    pending, _ = await approved_with(ledger, scope, rendered)
    await stores.complete(scope, FINGERPRINT, pending.body or {})

    def rows() -> int:
        with sqlite3.connect(tmp_path / "ledger.sqlite") as conn:
            return int(conn.execute("SELECT count(*) FROM idempotency_keys").fetchone()[0])

    assert rows() == 1
    assert await stores.sweep_expired(10) == 0  # both copies still live
    NOW[0] = time.time() + 60 + TTL_S + SWEEP_GRACE_S  # past both copies' expiry and the grace
    assert await stores.ledger_commands.sweep_expired(10) == 2  # one row in each file
    assert rows() == 0
    assert (await stores.ledger_commands.claim(scope, FINGERPRINT)).status is ClaimStatus.CLAIMED
