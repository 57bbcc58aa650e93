"""Recall: dated notes, confirmed facts only, and failing open within the budget."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import cast

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.decisions import decided
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for, transcript_document_id
from factledger.application.memory.types import RelationKind
from factledger.application.recall.forget_filter import ForgetMask, Rejection
from factledger.application.recall.notes import render_context, render_recall
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.sources import OpenProposal, ProfileEntry, SessionDigest
from factledger.application.recall.types import Degraded, NoteKind
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor
from factledger.testing.stalling_backend import INCIDENT_STALL_S, Fault, StallingBackend

SUBJECT = uuid.UUID("00000000-0000-0000-0000-0000000000c1")
JAN = datetime(2026, 1, 14, 9, 0, tzinfo=UTC)
MAR = datetime(2026, 3, 12, 15, 0, tzinfo=UTC)
JAN_TEXT = "We work with Supplier A at the moment."
MAR_TEXT = 'We moved to "Supplier B" last week.'
POLICY = RecallPolicy(threshold=0.3)
# The budget of the tests whose backend stalls: what must finish inside it (an in-memory
# search, the first step's notes) has room on a loaded machine, and each test waits it out.
STALL_BUDGET_S = 1.0


class FixedSources:
    """The ledger's read side with fixed data; `stall_s` delays every call (or only the calls
    named in `stalls`)."""

    def __init__(
        self, *, stall_s: float = 0.0, fail: bool = False, stalls: frozenset[str] | None = None
    ) -> None:
        self.stall_s, self.fail, self.stalls = stall_s, fail, stalls
        self.digests = {
            "wa-jan": SessionDigest("wa-jan", Channel.WHATSAPP, JAN, {"text": "intro call"}),
            "call-mar": SessionDigest("call-mar", Channel.VOICE, MAR, {"topic": "supplier change"}),
        }
        self.transcripts = {
            "wa-jan": [Message(Role.SUBJECT, JAN_TEXT)],
            "call-mar": [Message(Role.AGENT, "Hi!"), Message(Role.SUBJECT, MAR_TEXT)],
        }

    async def _wait(self, call: str = "") -> None:
        if self.stalls is None or call in self.stalls:
            await asyncio.sleep(self.stall_s)
        if self.fail:
            raise RuntimeError("read side down")

    async def confirmed_profile(self, subject_id: uuid.UUID) -> Sequence[ProfileEntry]:
        await self._wait()
        return [ProfileEntry("supplier", "Supplier B", None, False, MAR, "call-mar")]

    async def recent_sessions(
        self, subject_id: uuid.UUID, *, limit: int
    ) -> Sequence[SessionDigest]:
        await self._wait()
        return [self.digests["call-mar"], self.digests["wa-jan"]][:limit]

    async def open_proposals(self, subject_id: uuid.UUID, *, limit: int) -> Sequence[OpenProposal]:
        await self._wait()
        change = uuid.UUID("00000000-0000-0000-0000-00000000c0de")
        return [
            OpenProposal(
                change,
                "purchase_intent",
                "next quarter",
                "if the pricing works",
                False,
                JAN,
                "wa-jan",
            )
        ]

    async def sessions(
        self, subject_id: uuid.UUID, session_ids: Sequence[str]
    ) -> Mapping[str, SessionDigest]:
        await self._wait()
        return {i: self.digests[i] for i in session_ids if i in self.digests}

    async def transcript(self, subject_id: uuid.UUID, session_id: str) -> Sequence[Message]:
        await self._wait("transcript")
        return self.transcripts.get(session_id, [])


async def seeded_backend() -> InMemoryMemoryBackend:
    extractor = ScriptedExtractor()
    backend = InMemoryMemoryBackend(
        extractor=extractor, embedder=HashingEmbedder(), clock=ManualClock(MAR)
    )
    jan = [Message(Role.SUBJECT, JAN_TEXT)]
    mar = [Message(Role.AGENT, "Hi!"), Message(Role.SUBJECT, MAR_TEXT)]
    extractor.script_transcript(jan, ExtractedFact("f0", "works with Supplier A", "supplier", (0,)))
    extractor.script_transcript(
        mar,
        ExtractedFact("f0", "works with Supplier B", "supplier", (1,), RelationKind.UPDATES),
        ExtractedFact("f1", "unhappy with Supplier B prices", None, (1,), is_inference=True),
    )
    ns = namespace_for(SUBJECT)
    for session_id, channel, when, transcript in (
        ("wa-jan", Channel.WHATSAPP, JAN, jan),
        ("call-mar", Channel.VOICE, MAR, mar),
    ):
        await backend.ingest_transcript(
            ns,
            transcript_document_id(SUBJECT, session_id),
            transcript,
            occurred_at=when,
            metadata={"session_id": session_id, "channel": channel.value},
        )
    return backend


def recall_with(
    backend: MemoryBackend | None,
    sources: FixedSources | None = None,
    policy: RecallPolicy = POLICY,
    tenants: Mapping[str, RecallPolicy] | None = None,
) -> Recall:
    policies = RecallPolicies(default=policy, tenants=tenants or {})
    return Recall(RecallPorts(backend, sources or FixedSources(), policies))


async def test_recall_returns_dated_notes_without_quotes_and_the_superseded_fact() -> None:
    opted_in = RecallPolicy(threshold=0.3, excerpts=True)
    recall = recall_with(await seeded_backend(), policy=opted_in)
    result = await recall.recall(SUBJECT, "works with supplier")
    assert result.degraded is None
    texts = [n.text for n in result.notes]
    assert texts == ["works with Supplier B, previously Supplier A"]
    note = result.notes[0]
    assert (note.on, note.channel) == (MAR.date(), Channel.VOICE)
    assert note.origin.kind is NoteKind.MEMORY
    assert note.origin.session_id == "call-mar"
    rendered = render_recall(result)
    assert "2026-03-12, voice call: works with Supplier B, previously Supplier A" in rendered
    # the verbatim excerpt is separate, attributed, and the only place with quotation marks
    assert [e.text for e in result.excerpts] == [MAR_TEXT]
    assert "Subject, 2026-03-12, voice call: \u201c" in rendered
    assert all('"' not in n.text for n in result.notes)


async def test_default_recall_and_context_carry_notes_and_no_excerpts() -> None:
    recall = recall_with(await seeded_backend(), policy=RecallPolicy(threshold=0.3))
    result = await recall.recall(SUBJECT, "works with supplier")
    context = await recall.session_context(SUBJECT, topic="works with supplier")
    assert [n.text for n in result.notes] == ["works with Supplier B, previously Supplier A"]
    assert [n.text for n in context.memories] == [n.text for n in result.notes]
    assert (result.excerpts, context.excerpts) == ((), ())
    for rendered in (render_recall(result), render_context(context)):
        assert "Verbatim" not in rendered
        assert "\u201c" not in rendered


async def test_a_tenant_that_opts_in_gets_attributed_excerpts_apart_from_the_notes() -> None:
    tenants = {"quotes": RecallPolicy(threshold=0.3, excerpts=True)}
    recall = recall_with(await seeded_backend(), tenants=tenants)
    plain = await recall.session_context(SUBJECT, topic="works with supplier")
    quoted = await recall.session_context(SUBJECT, topic="works with supplier", tenant="quotes")
    assert plain.excerpts == ()
    (excerpt,) = quoted.excerpts
    assert (excerpt.text, excerpt.role, excerpt.session_id) == (MAR_TEXT, Role.SUBJECT, "call-mar")
    assert excerpt.on == MAR.date()
    assert quoted.memories == plain.memories  # the notes are the same, with or without quotes
    assert all(MAR_TEXT not in n.text for n in quoted.memories)


async def test_inferred_facts_are_excluded_unless_the_tenant_asks() -> None:
    backend = await seeded_backend()
    relaxed = RecallPolicy(threshold=0.2, include_inferred=True)
    recall = recall_with(backend, tenants={"analysts": relaxed})
    default = await recall.recall(SUBJECT, "unhappy with Supplier B prices")
    assert all(not n.origin.inferred for n in default.notes)
    analysts = await recall.recall(SUBJECT, "unhappy with Supplier B prices", tenant="analysts")
    assert any(n.origin.inferred for n in analysts.notes)


async def test_limit_is_honoured() -> None:
    recall = recall_with(await seeded_backend(), policy=RecallPolicy(threshold=0.0, limit=1))
    result = await recall.recall(SUBJECT, "supplier")
    assert len(result.notes) <= 1


async def test_a_38_second_stall_costs_at_most_the_budget() -> None:
    stalling = StallingBackend(await seeded_backend(), fault=Fault.STALL)
    policy = RecallPolicy(threshold=0.3, recall_budget_s=STALL_BUDGET_S)
    recall = recall_with(stalling, policy=policy)
    started = time.perf_counter()
    result = await recall.recall(SUBJECT, "works with supplier")
    elapsed = time.perf_counter() - started
    assert stalling.stall_s == INCIDENT_STALL_S
    assert result.degraded is Degraded.TIMEOUT
    assert result.notes == ()
    assert elapsed < STALL_BUDGET_S + 2.0  # a generous bound: the call returned at the deadline
    await asyncio.sleep(0)  # let the cancellation land
    assert stalling.cancelled == 1


async def test_a_stall_in_the_second_step_keeps_what_the_first_found() -> None:
    policy = RecallPolicy(threshold=0.3, recall_budget_s=STALL_BUDGET_S, excerpts=True)
    sources = FixedSources(stall_s=38.0, stalls=frozenset({"transcript"}))
    recall = recall_with(await seeded_backend(), sources, policy)
    result = await recall.recall(SUBJECT, "works with supplier")
    assert result.degraded is Degraded.TIMEOUT  # the transcript for the excerpt never came
    assert [n.text for n in result.notes] == ["works with Supplier B, previously Supplier A"]
    assert result.excerpts == ()


async def test_superseded_facts_found_by_the_search_need_no_second_round_trip() -> None:
    refusing = StallingBackend(
        await seeded_backend(), fault=Fault.RAISE, faulty_calls=frozenset({"get_memory"})
    )
    result = await recall_with(refusing).recall(SUBJECT, "works with supplier")
    assert result.degraded is None
    assert refusing.calls == 0
    assert [n.text for n in result.notes] == ["works with Supplier B, previously Supplier A"]


async def test_a_backend_error_fails_open() -> None:
    failing = StallingBackend(await seeded_backend(), fault=Fault.RAISE)
    result = await recall_with(failing).recall(SUBJECT, "works with supplier")
    assert result.degraded is Degraded.BACKEND_ERROR
    assert result.notes == ()


async def test_disabled_memory_returns_at_once() -> None:
    stalling = StallingBackend(await seeded_backend(), fault=Fault.STALL)
    recall = recall_with(stalling, tenants={"off": RecallPolicy(enabled=False)})
    result = await recall.recall(SUBJECT, "supplier", tenant="off")
    context = await recall.session_context(SUBJECT, topic="supplier", tenant="off")
    assert result.degraded is Degraded.DISABLED
    assert context.degraded is Degraded.DISABLED
    assert stalling.calls == 0
    no_backend = await recall_with(None).recall(SUBJECT, "supplier")
    assert no_backend.degraded is Degraded.DISABLED


async def test_session_context_separates_facts_from_things_to_ask() -> None:
    recall = recall_with(await seeded_backend())
    context = await recall.session_context(SUBJECT, topic="works with supplier")
    assert context.degraded is None
    assert [(n.text, n.on, n.channel) for n in context.profile] == [
        ("supplier: Supplier B", MAR.date(), Channel.VOICE)
    ]
    assert [n.text for n in context.to_confirm] == [
        "purchase intent: next quarter, if the pricing works (stated, unconfirmed)"
    ]
    assert [n.origin.kind for n in context.to_confirm] == [NoteKind.PROPOSAL]
    assert [n.text for n in context.recent_sessions] == ["topic: supplier change", "intro call"]
    assert [n.text for n in context.memories] == ["works with Supplier B, previously Supplier A"]
    rendered = render_context(context)
    assert rendered.index("Confirmed profile:") < rendered.index("Unconfirmed, ask the subject")
    assert "- 2026-01-14, WhatsApp: purchase intent: next quarter" in rendered


async def test_session_context_fails_open_per_lookup() -> None:
    stalling = StallingBackend(await seeded_backend(), fault=Fault.STALL)
    policy = RecallPolicy(threshold=0.3, context_budget_s=STALL_BUDGET_S)
    context = await recall_with(stalling, policy=policy).session_context(
        SUBJECT, topic="works with supplier"
    )
    assert context.degraded is Degraded.TIMEOUT
    assert context.degraded_lookups == ("memories",)
    assert [n.text for n in context.profile] == ["supplier: Supplier B"]


async def test_a_failing_read_side_is_reported_not_raised() -> None:
    recall = recall_with(await seeded_backend(), sources=FixedSources(fail=True))
    context = await recall.session_context(SUBJECT)
    assert context.degraded is Degraded.SOURCE_ERROR
    assert set(context.degraded_lookups) == {"profile", "sessions"}


async def test_recall_runs_alongside_other_retrieval() -> None:
    stalling = StallingBackend(await seeded_backend(), fault=Fault.STALL)
    recall = recall_with(stalling, policy=RecallPolicy(recall_budget_s=0.2))

    async def other_retrieval() -> str:
        await asyncio.sleep(0.05)
        return "docs"

    memory, docs = await asyncio.gather(recall.recall(SUBJECT, "supplier"), other_retrieval())
    assert docs == "docs"
    assert memory.degraded is Degraded.TIMEOUT


async def test_cancelling_the_caller_cancels_the_lookups() -> None:
    stalling = StallingBackend(await seeded_backend(), fault=Fault.STALL)
    recall = recall_with(stalling, policy=RecallPolicy(recall_budget_s=30))
    task = asyncio.create_task(recall.recall(SUBJECT, "supplier"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)
    assert stalling.cancelled == 1
    assert cast("int", stalling.calls) == 1


async def test_a_forgotten_earlier_value_never_resurfaces_as_history() -> None:
    backend = await seeded_backend()
    ns = namespace_for(SUBJECT)
    old = [m for m in await backend.list_memories(ns) if m.text == "works with Supplier A"]
    await backend.forget(ns, [m.id for m in old], reason="asked")
    result = await recall_with(backend).recall(SUBJECT, "works with supplier")
    assert result.degraded is None
    assert [n.text for n in result.notes] == ["works with Supplier B"]


class FixedMask:
    """The ledger's forgets and rejections, fixed."""

    def __init__(self, mask: ForgetMask) -> None:
        self.value = mask

    async def mask(self, subject_id: uuid.UUID) -> ForgetMask:
        return self.value


@pytest.mark.parametrize(
    ("value", "lines"),
    [
        ("Supplier A", ()),
        # The proposal's value is the line's words, the memory the extractor's rewording of
        # them: the memory goes as made from the evidence line, under the field's slot.
        (JAN_TEXT, (0,)),
    ],
)
async def test_a_rejected_earlier_value_never_dates_a_later_one_as_history(
    value: str, lines: tuple[int, ...]
) -> None:
    backend = await seeded_backend()
    jan = transcript_document_id(SUBJECT, "wa-jan")
    rejected = Rejection(
        decided("supplier", [value], evidence_document=jan, evidence_lines=lines),
        frozenset({jan}),
    )
    ports = RecallPorts(
        backend,
        FixedSources(),
        RecallPolicies(default=POLICY, tenants={}),
        forgets=FixedMask(ForgetMask(rejections=(rejected,))),
    )

    # Found by the search (superseded) or read by id for history: a value a reviewer
    # rejected was never true, so it is never "previously" anything.
    for query in ("works with supplier", "Supplier B"):
        result = await Recall(ports).recall(SUBJECT, query)
        assert result.degraded is None
        assert "works with Supplier B" in [n.text for n in result.notes]
        assert all("Supplier A" not in n.text for n in result.notes)


@pytest.mark.parametrize(
    ("fault", "degraded"), [(Fault.RAISE, Degraded.BACKEND_ERROR), (Fault.STALL, Degraded.TIMEOUT)]
)
async def test_a_rejection_whose_memories_cannot_be_read_leaves_no_notes_within_the_budget(
    fault: Fault, degraded: Degraded
) -> None:
    # The reads that tell whether a hit is the rejected line's memory fail or stall: recall
    # never guesses, it gives no memory notes and says why, by its deadline.
    stalling = StallingBackend(
        await seeded_backend(), fault=fault, faulty_calls=frozenset({"get_memory"})
    )
    jan = transcript_document_id(SUBJECT, "wa-jan")
    rejected = Rejection(
        decided("supplier", [JAN_TEXT], evidence_document=jan, evidence_lines=[0]),
        frozenset({jan}),
    )
    ports = RecallPorts(
        stalling,
        FixedSources(),
        RecallPolicies(
            default=RecallPolicy(threshold=0.3, recall_budget_s=STALL_BUDGET_S), tenants={}
        ),
        forgets=FixedMask(ForgetMask(rejections=(rejected,))),
    )

    result = await Recall(ports).recall(SUBJECT, "works with supplier")

    assert result.degraded is degraded
    assert result.notes == ()


async def test_the_budget_counts_from_the_requests_arrival() -> None:
    stalling = StallingBackend(await seeded_backend(), fault=Fault.STALL)
    recall = recall_with(stalling, policy=RecallPolicy(threshold=0.3, recall_budget_s=5.0))
    started = time.perf_counter()
    result = await recall.recall(SUBJECT, "works with supplier", arrived_at=time.monotonic() - 4.0)
    elapsed = time.perf_counter() - started
    assert result.degraded is Degraded.TIMEOUT
    assert elapsed < 3.0  # what was left (1 s), not a fresh 5 s


async def test_a_recall_that_cannot_start_in_time_is_shed_without_a_lookup() -> None:
    stalling = StallingBackend(await seeded_backend(), fault=Fault.STALL)
    sources = FixedSources(stall_s=60.0)
    recall = recall_with(stalling, sources)
    late = time.monotonic() - 0.95  # 95% of the 1 s budget spent queueing
    result = await recall.recall(SUBJECT, "works with supplier", arrived_at=late)
    context = await recall.session_context(SUBJECT, topic="supplier", arrived_at=late - 1.0)
    assert result.degraded is context.degraded is Degraded.OVERLOADED
    assert (result.notes, context.profile) == ((), ())
    assert stalling.calls == 0
