"""`SupermemoryMemoryBackend` through the official SDK against the local server, in process.

The contract suite covers the port; these tests cover what is particular to Supermemory: the
rest of the three contract tests v5 cannot fully pass (no slot, condition or source indexes),
hybrid results, the ledger shared across processes, namespace validation, and logs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import structlog

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.supermemory.backend import SupermemoryMemoryBackend
from factledger.application.errors import InvalidMemoryInputError, MemoryConflictError
from factledger.application.memory.types import (
    HitKind,
    IngestMode,
    Namespace,
    ProcessingState,
    Relation,
    RelationKind,
    SearchMode,
    SearchQuery,
)
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor, stated
from factledger.testing.supermemory.engine import ProcessingTiming
from factledger.testing.supermemory.harness import supermemory_backend_in_process
from factledger.testing.supermemory.server import SupermemoryServer

NS = Namespace("subject-1")
WHEN = datetime(2026, 3, 2, 10, 30, tzinfo=UTC)


@pytest.fixture
def extractor() -> ScriptedExtractor:
    return ScriptedExtractor()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def wired(
    extractor: ScriptedExtractor, clock: ManualClock
) -> AsyncIterator[tuple[SupermemoryMemoryBackend, SupermemoryServer]]:
    async with supermemory_backend_in_process(extractor, HashingEmbedder(256), clock=clock) as pair:
        yield pair


async def ingest(
    backend: SupermemoryMemoryBackend,
    extractor: ScriptedExtractor,
    doc: str,
    text: str,
    *facts: object,
) -> None:
    transcript = extractor.script(text, *facts)  # type: ignore[arg-type]
    status = await backend.ingest_transcript(
        NS, doc, transcript, occurred_at=WHEN, metadata={"channel": "voice"}
    )
    assert status.state is ProcessingState.DONE


async def test_an_update_chain_reads_back_with_versions_relations_and_provenance(
    wired: tuple[SupermemoryMemoryBackend, SupermemoryServer], extractor: ScriptedExtractor
) -> None:
    backend, _ = wired
    await ingest(
        backend, extractor, "call-1", "We use Supplier A", stated("f0", "Supplier is A", slot="s")
    )
    await ingest(
        backend,
        extractor,
        "call-2",
        "Now Supplier B",
        stated("f0", "Supplier is B", slot="s", updates=True),
    )

    a, b = await backend.list_memories(NS)
    hits = await backend.search(NS, SearchQuery("supplier", threshold=0.0, limit=5))

    assert (a.text, a.is_latest, a.version) == ("Supplier is A", False, 1)
    assert (b.text, b.is_latest, b.version) == ("Supplier is B", True, 2)
    assert b.relations == (Relation(RelationKind.UPDATES, a.id),)
    assert (await backend.get_memory(NS, a.id)).text == "Supplier is A"
    assert [h.text for h in hits] == ["Supplier is B"]
    assert (hits[0].occurred_at, hits[0].document_id) == (WHEN, "call-2")
    assert dict(hits[0].metadata) == {"channel": "voice"}
    # v5 has no slot, condition or source indexes: the adapter reports none, never a guess.
    assert (b.slot, b.condition, hits[0].source_indexes) == (None, None, ())


async def test_hybrid_search_reads_memory_and_chunk_results(
    wired: tuple[SupermemoryMemoryBackend, SupermemoryServer], extractor: ScriptedExtractor
) -> None:
    backend, _ = wired
    await ingest(backend, extractor, "call-1", "Daughter Ana", stated("f0", "Daughter is Ana"))
    await backend.put_record(NS, "summary-1", "session_summary", '{"t": "daughter Ana visits"}')

    hits = await backend.search(
        NS, SearchQuery("daughter Ana", mode=SearchMode.HYBRID, threshold=0.0, limit=10)
    )

    assert {(h.kind, h.text) for h in hits} == {
        (HitKind.MEMORY, "Daughter is Ana"),
        (HitKind.CHUNK, '{"t": "daughter Ana visits"}'),
    }
    assert next(h for h in hits if h.kind is HitKind.CHUNK).document_id == "summary-1"


async def test_records_round_trip_byte_for_byte_and_refuse_another_body(
    wired: tuple[SupermemoryMemoryBackend, SupermemoryServer],
) -> None:
    backend, server = wired
    body = '{ "note" : "Zoë  prefers\\tmornings",\n  "n": 1.50 }'

    await backend.put_record(NS, "r-1", "note", body, {"tags": ("a", "b")})
    await backend.put_record(NS, "r-1", "note", body, {"tags": ("a", "b")})
    stored = await backend.get_record(NS, "r-1")

    assert stored.body_json == body
    assert (stored.kind, dict(stored.metadata)) == ("note", {"tags": ("a", "b")})
    assert server.requests.count("add") == 1
    with pytest.raises(MemoryConflictError):
        await backend.put_record(NS, "r-1", "note", '{"note": "other"}', {"tags": ("a", "b")})
    with pytest.raises(MemoryConflictError):
        await backend.put_record(NS, "r-1", "note", body)  # same body, other metadata


async def test_a_namespace_with_a_slash_is_refused_before_any_request(
    wired: tuple[SupermemoryMemoryBackend, SupermemoryServer],
) -> None:
    adapter, server = wired
    backend = ValidatingMemoryBackend(adapter)  # as the composition root wraps it

    with pytest.raises(InvalidMemoryInputError):
        await backend.search(Namespace("a/b"), SearchQuery("x"))
    with pytest.raises(InvalidMemoryInputError):
        await backend.put_record(NS, "../x", "note", "{}")

    assert server.requests == []


async def test_reserved_metadata_keys_are_refused(
    wired: tuple[SupermemoryMemoryBackend, SupermemoryServer],
) -> None:
    backend, _ = wired

    with pytest.raises(InvalidMemoryInputError):
        await backend.put_record(NS, "r-1", "note", "{}", {"fl_kind": "expiry"})


async def test_expiry_and_forget_reason_live_in_the_namespace_for_every_process(
    extractor: ScriptedExtractor, clock: ManualClock
) -> None:
    async with supermemory_backend_in_process(extractor, HashingEmbedder(256), clock=clock) as (
        first,
        server,
    ):
        await ingest(first, extractor, "call-1", "Exam tomorrow", stated("f0", "Has an exam"))
        await ingest(first, extractor, "call-2", "Likes tea", stated("f0", "Likes tea"))
        exam, tea = await first.list_memories(NS)
        await first.expire(NS, exam.id, at=clock.now() + timedelta(hours=1))
        await first.forget(NS, [tea.id], reason="subject asked")
        # A second adapter (another process) on the same server sees the same ledger.
        other_http = httpx.AsyncClient(transport=httpx.ASGITransport(app=server.app))
        second = SupermemoryMemoryBackend(
            api_key=server.api_key,
            base_url="http://supermemory.local",
            http_client=other_http,
            clock=clock,
        )
        clock.advance(timedelta(hours=2))
        hidden = await second.search(NS, SearchQuery("exam", threshold=0.0))
        assert await second.apply_due_expiries(NS) == 1
        expired = await second.get_memory(NS, exam.id)
        forgotten = await second.get_memory(NS, tea.id)
        ledger_hits = await second.search(
            NS, SearchQuery("memory_id expires_at forget", mode=SearchMode.CHUNKS, threshold=0.0)
        )
        await other_http.aclose()

    assert hidden == []
    assert (expired.is_forgotten, expired.expires_at) == (True, clock.now() - timedelta(hours=1))
    assert expired.forget_reason is None  # as the port says: expiry leaves no reason
    assert (forgotten.is_forgotten, forgotten.forget_reason) == (True, "subject asked")
    assert ledger_hits == []


async def test_batched_ingest_reports_extracting_while_dreaming_lags() -> None:
    extractor = ScriptedExtractor()
    transcript = extractor.script("Likes tea", stated("f0", "Likes tea"))
    async with supermemory_backend_in_process(
        extractor, HashingEmbedder(256), timing=ProcessingTiming(dreaming_s=600.0)
    ) as (backend, server):
        sent = await backend.ingest_transcript(
            NS, "call-1", transcript, occurred_at=WHEN, mode=IngestMode.BATCHED
        )
        later = await backend.processing_status(NS, "call-1")

    # Chunks are done at once, memories wait for dreaming: the port calls that "extracting".
    assert sent.state is ProcessingState.EXTRACTING
    assert later.state is ProcessingState.EXTRACTING
    assert extractor.requests == []
    assert server.engine.namespaces[NS].documents  # sent, with dreaming="dynamic"
    (doc,) = server.engine.namespaces[NS].documents.values()
    assert doc.dreaming == "dynamic"


async def test_content_is_sent_with_roles_and_never_logged(
    wired: tuple[SupermemoryMemoryBackend, SupermemoryServer], extractor: ScriptedExtractor
) -> None:
    backend, server = wired
    secret = "my sister's diagnosis"
    transcript = [Message(Role.AGENT, "How can I help?"), Message(Role.SUBJECT, secret)]
    extractor.script_transcript(transcript, stated("f0", secret))

    with structlog.testing.capture_logs() as logs:
        await backend.ingest_transcript(NS, "call-1", transcript, occurred_at=WHEN)
        await backend.search(NS, SearchQuery(secret, threshold=0.0))
        (memory,) = await backend.list_memories(NS)
        await backend.forget(NS, [memory.id], reason="subject asked")

    (doc,) = [
        d for d in server.engine.namespaces[NS].documents.values() if d.caller_id == "tr-call-1"
    ]
    assert doc.content == f"agent: How can I help?\nsubject: {secret}"
    assert doc.date == WHEN.isoformat()
    assert logs
    assert secret not in repr(logs)


async def test_early_404s_after_an_add_are_waited_out() -> None:
    extractor = ScriptedExtractor()
    transcript = extractor.script("Likes tea", stated("f0", "Likes tea"))
    timing = ProcessingTiming(read_after_write_404_s=0.2)
    async with supermemory_backend_in_process(extractor, HashingEmbedder(256), timing=timing) as (
        backend,
        server,
    ):
        status = await backend.ingest_transcript(NS, "call-1", transcript, occurred_at=WHEN)
        await backend.put_record(NS, "r-1", "note", '{"a": 1}')

    assert (status.state, status.facts) == (ProcessingState.DONE, 1)
    assert server.requests.count("add") == 2  # no duplicate adds while the 404s lasted


async def test_a_forgotten_middle_version_is_never_replaced_by_an_older_one(
    wired: tuple[SupermemoryMemoryBackend, SupermemoryServer], extractor: ScriptedExtractor
) -> None:
    """The service leaves forgotten memories out of `related`: with B forgotten, C's nearest
    listed parent is A, which C does not update. The adapter names no parent then."""
    backend, _ = wired
    for doc, text, supplier, updates in (
        ("call-1", "We use Supplier A", "A", False),
        ("call-2", "Now Supplier B", "B", True),
        ("call-3", "Now Supplier C", "C", True),
    ):
        fact = stated("f0", f"Supplier is {supplier}", slot="s", updates=updates)
        await ingest(backend, extractor, doc, text, fact)
    a, b, c = await backend.list_memories(NS)
    assert c.relations == (Relation(RelationKind.UPDATES, b.id),)

    await backend.forget(NS, [b.id], reason="asked")

    listed = {m.id: m for m in await backend.list_memories(NS, include_forgotten=True)}
    assert listed[c.id].relations == ()
    assert (await backend.get_memory(NS, c.id)).relations == ()
    assert listed[a.id].relations == ()
