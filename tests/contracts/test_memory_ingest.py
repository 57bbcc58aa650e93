"""Contract: the extraction path, instant and batched, idempotent by document id."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import pytest

from factledger.application.errors import MemoryNotFoundError
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    Capability,
    HitKind,
    IngestMode,
    Namespace,
    ProcessingState,
    ProcessingStatus,
    SearchQuery,
)
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor, stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
WaitDone = Callable[[Namespace, str], Awaitable[ProcessingStatus]]
NS = Namespace("subject-ingest")
WHEN = datetime(2025, 11, 3, 14, 30, tzinfo=UTC)


async def test_an_instant_ingest_is_searchable_when_the_call_returns(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    status = await ingest(
        NS,
        "call-1",
        "We buy our packaging from Supplier A",
        stated("f0", "Buys packaging from Supplier A", slot="supplier"),
        occurred_at=WHEN,
        metadata={"channel": "voice"},
    )

    hits = await backend.search(NS, SearchQuery("packaging supplier", threshold=0.0, limit=5))

    assert status.state is ProcessingState.DONE
    assert status.facts == 1
    assert [h.text for h in hits] == ["Buys packaging from Supplier A"]
    hit = hits[0]
    assert hit.kind is HitKind.MEMORY
    assert hit.is_latest
    assert not hit.is_inference
    assert hit.occurred_at == WHEN
    assert hit.document_id == "call-1"
    assert dict(hit.metadata) == {"channel": "voice"}
    (memory,) = await backend.list_memories(NS)
    if Capability.FACT_PROVENANCE in backend.capabilities:
        assert hit.source_indexes == (0,)
        assert memory.source_indexes == (0,)
    else:  # no provenance reported means none claimed
        assert hit.source_indexes == ()
        assert memory.source_indexes == ()


async def test_reingesting_a_document_id_is_a_no_op(
    backend: MemoryBackend, ingest: Ingest, extractor: ScriptedExtractor
) -> None:
    fact = stated("f0", "Prefers email over phone calls", slot="contact")
    await ingest(NS, "call-1", "Please email me, I dislike phone calls", fact)
    again = await ingest(NS, "call-1", "Please email me, I dislike phone calls", fact)

    memories = await backend.list_memories(NS)

    assert again.state is ProcessingState.DONE
    assert len(memories) == 1
    assert memories[0].is_latest
    assert memories[0].version == 1
    assert len(extractor.requests) == 1


async def test_the_extractor_sees_the_transcript_date_and_the_current_facts(
    backend: MemoryBackend, ingest: Ingest, extractor: ScriptedExtractor
) -> None:
    await ingest(
        NS,
        "call-1",
        "Our budget is 20k",
        stated("f0", "Budget is 20k", slot="budget"),
        occurred_at=WHEN - timedelta(days=7),  # said before call-2, which updates it
    )
    await ingest(
        NS,
        "call-2",
        "The budget is now 30k",
        stated("f0", "Budget is 30k", slot="budget", updates=True),
        occurred_at=WHEN,
    )
    await ingest(NS, "call-3", "We open on Sundays", stated("f0", "Open on Sundays"))

    last = extractor.requests[-1]

    assert extractor.requests[1].occurred_at == WHEN
    assert sorted(k.text for k in last.known) == ["Budget is 30k"]
    assert [k.slot for k in last.known] == ["budget"]


async def test_a_failed_extraction_reports_failed_and_can_be_retried(
    backend: MemoryBackend, extractor: ScriptedExtractor, clock: ManualClock
) -> None:
    transcript = [Message(Role.SUBJECT, "nobody scripted this line")]

    failed = await backend.ingest_transcript(NS, "call-9", transcript, occurred_at=clock.now())
    extractor.script_transcript(transcript, stated("f0", "Scripted at last"))
    retried = await backend.ingest_transcript(NS, "call-9", transcript, occurred_at=clock.now())

    assert failed.state is ProcessingState.FAILED
    assert failed.error_type
    assert retried.state is ProcessingState.DONE
    assert [m.text for m in await backend.list_memories(NS)] == ["Scripted at last"]


async def test_the_status_of_an_unknown_document_is_not_found(backend: MemoryBackend) -> None:
    with pytest.raises(MemoryNotFoundError):
        await backend.processing_status(NS, "never-sent")


async def test_a_batched_ingest_reaches_done_and_becomes_searchable(
    backend: MemoryBackend, ingest: Ingest, wait_done: WaitDone
) -> None:
    accepted = await ingest(
        NS,
        "call-b1",
        "I run three bakeries in Leeds",
        stated("f0", "Runs three bakeries in Leeds", slot="business"),
        mode=IngestMode.BATCHED,
    )

    settled = await wait_done(NS, "call-b1")
    hits = await backend.search(NS, SearchQuery("bakeries Leeds", threshold=0.0, limit=3))

    assert accepted.document_id == "call-b1"
    assert accepted.state in set(ProcessingState) - {ProcessingState.FAILED}
    assert settled.state is ProcessingState.DONE
    assert settled.facts == 1
    assert [h.text for h in hits] == ["Runs three bakeries in Leeds"]


async def test_several_batched_ingests_all_settle(
    backend: MemoryBackend, ingest: Ingest, wait_done: WaitDone
) -> None:
    for n in range(5):
        await ingest(
            NS,
            f"batch-{n}",
            f"Order number {n} was delivered",
            stated("f0", f"Order {n} delivered"),
            mode=IngestMode.BATCHED,
        )

    states = [(await wait_done(NS, f"batch-{n}")).state for n in range(5)]

    assert states == [ProcessingState.DONE] * 5
    assert len(await backend.list_memories(NS)) == 5
