"""pgvector's soft forget shreds what it keeps: the forgotten memory's text and condition, and
the messages of its document it was drawn from, leave every table (ADR 0015); its id and
reason stay. pgvector only: the other backends are covered by their own forget semantics."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

import psycopg
import pytest
from contracts.conftest import pgvector_memory_backend
from psycopg import sql

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.application.memory.forwarding import innermost_backend
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor, stated

pytestmark = pytest.mark.integration
NS = Namespace("subject-shred")
CANARY = "Quokka Lantern"
KEPT = "My daughter is called Ana"
TABLES = ("memories", "documents", "records", "chunks")


async def table_text(backend: MemoryBackend) -> str:
    """Every row of the backend's tables, as text, read as their owner (no row security)."""
    pg = cast("PgvectorMemoryBackend", innermost_backend(backend))
    dumped = []
    async with await psycopg.AsyncConnection.connect(pg.config.admin_conninfo) as conn:
        for table in TABLES:
            query = sql.SQL("SELECT t::text FROM {} AS t").format(
                sql.Identifier(pg.config.schema, table)
            )
            dumped += [row[0] for row in await (await conn.execute(query)).fetchall()]
    return "\n".join(dumped)


@pytest.mark.parametrize("backend", [pgvector_memory_backend], indirect=True, ids=["pgvector"])
async def test_forgetting_a_memory_shreds_its_words_in_memories_and_documents(
    backend: MemoryBackend, extractor: ScriptedExtractor, clock: ManualClock
) -> None:
    transcript = [
        Message(Role.SUBJECT, KEPT),
        Message(Role.SUBJECT, f"We buy from {CANARY} now"),
    ]
    extractor.script_transcript(
        transcript,
        stated("f0", "Daughter is Ana", slot="daughter"),
        stated("f1", f"Buys from {CANARY}", slot="supplier", source_indexes=(1,), condition=CANARY),
    )
    await backend.ingest_transcript(NS, "call-1", transcript, occurred_at=clock.now())
    by_slot = {m.slot: m for m in await backend.list_memories(NS)}
    assert CANARY in await table_text(backend)

    await backend.forget(NS, [by_slot["supplier"].id], reason="subject asked")

    forgotten = await backend.get_memory(NS, by_slot["supplier"].id)
    assert (forgotten.is_forgotten, forgotten.forget_reason) == (True, "subject asked")
    assert (forgotten.text, forgotten.condition) == ("[forgotten]", None)
    assert (await backend.get_memory(NS, by_slot["daughter"].id)).text == "Daughter is Ana"
    dumped = await table_text(backend)
    assert CANARY not in dumped
    assert KEPT in dumped  # the other message of the document stays


@pytest.mark.parametrize("backend", [pgvector_memory_backend], indirect=True, ids=["pgvector"])
async def test_forgetting_a_replaced_value_leaves_no_word_of_it_in_its_successors_row(
    backend: MemoryBackend, extractor: ScriptedExtractor, clock: ManualClock
) -> None:
    said = f"We get our hampers from {CANARY}."
    old = replace(stated("f0", f"gets hampers from {CANARY}", slot="supplier"), value=CANARY)
    new = replace(stated("f0", "gets hampers from Tern", slot="supplier"), value="Tern")
    await backend.ingest_transcript(
        NS, "call-1", extractor.script(said, old), occurred_at=clock.now()
    )
    await backend.ingest_transcript(
        NS, "call-2", extractor.script("Tern it is.", new), occurred_at=clock.now()
    )
    (replaced,) = [m for m in await backend.list_memories(NS) if CANARY in m.text]
    assert "quokka" in await table_text(backend)  # its keywords, folded and lower-cased

    await backend.forget(NS, [replaced.id], reason="subject asked")

    dumped = await table_text(backend)
    assert "quokka" not in dumped.lower()
    assert "lantern" not in dumped.lower()
