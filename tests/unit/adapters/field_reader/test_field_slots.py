"""Memories slotted by the field they state: the shipped heads over the shipped embedder,
through the rule extractor and the in-memory backend as the product composes them."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.field_reader.head import (
    SHIPPED,
    SHIPPED_SHA256,
    HeadFileError,
    load_heads,
    save_heads,
)
from factledger.adapters.field_reader.reader import EmbeddingFieldReader
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionContext,
    ExtractionRequest,
)
from factledger.application.memory.field_slots import FieldSlottingExtractor
from factledger.application.memory.types import Namespace, RelationKind, SearchMode, SearchQuery
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder()


def _said(text: str, at: datetime) -> list[Message]:
    return [Message(Role.SUBJECT, text, at)]


def test_the_shipped_file_is_the_pinned_one() -> None:
    assert hashlib.sha256(SHIPPED.read_bytes()).hexdigest() == SHIPPED_SHA256
    heads = load_heads()
    assert {"home_buyer", "patient", "lead", "candidate"} <= set(heads.kinds)
    assert "must_haves" in heads.kinds["home_buyer"].many


def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "heads.npz"
    other.write_bytes(SHIPPED.read_bytes() + b"\0")
    with pytest.raises(HeadFileError, match="SHA-256"):
        load_heads(other)
    other.write_bytes(b"not a heads file")
    with pytest.raises(HeadFileError, match="not a field heads file"):
        load_heads(other, None)


def test_heads_written_by_the_training_command_read_back(tmp_path: Path) -> None:
    heads = load_heads()
    sha = save_heads(heads, tmp_path / "own.npz")
    again = load_heads(tmp_path / "own.npz", sha)
    assert again.model_id == heads.model_id
    assert again.min_probability == heads.min_probability
    assert set(again.kinds) == set(heads.kinds)
    for kind, head in heads.kinds.items():
        assert again.kinds[kind].classes == head.classes
        assert again.kinds[kind].many == head.many
        assert (again.kinds[kind].weights == head.weights).all()


async def test_the_reader_names_one_valued_fields_and_leaves_lists_and_chat(
    embedder: OnnxEmbedder,
) -> None:
    reader = EmbeddingFieldReader(embedder, load_heads())
    fields = await reader.read(
        "home_buyer",
        [
            "the subject can spend up to 450,000 on the house",
            "the subject wants a place in Harbourside",
            "lovely weather today",
        ],
    )
    assert fields == ["budget", "preferred_area", None]
    assert reader.knows("home_buyer")
    assert not reader.knows("dragon")


async def test_heads_of_another_model_are_not_used() -> None:
    reader = EmbeddingFieldReader(HashingEmbedder(384), load_heads())
    assert not reader.knows("home_buyer")
    assert await reader.read("home_buyer", ["the subject can spend 450,000"]) == [None]


class _Fixed:
    """The inner extractor's facts, as given."""

    def __init__(self, facts: list[ExtractedFact]) -> None:
        self.facts = facts

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        return self.facts


async def test_only_stated_unlinked_unslotted_memories_of_a_known_kind_are_slotted(
    embedder: OnnxEmbedder,
) -> None:
    budget = "the subject can spend up to 450,000 on the house"
    facts = [
        ExtractedFact("f0", budget, None, (0,)),
        ExtractedFact("f1", budget, "supplier", (0,)),
        ExtractedFact("f2", budget, None, (0,), is_inference=True),
        ExtractedFact("f3", budget, None, (0,), relation=RelationKind.EXTENDS, related_to=("x",)),
    ]
    slotting = FieldSlottingExtractor(_Fixed(facts), EmbeddingFieldReader(embedder, load_heads()))
    request = ExtractionRequest(
        _said(budget, T0), T0, context=ExtractionContext(subject_kind="home_buyer")
    )
    assert [f.slot for f in await slotting.extract(request)] == [
        "budget",
        "supplier",
        None,
        None,
    ]
    unknown = ExtractionRequest(_said(budget, T0), T0, context=ExtractionContext("t", "dragon"))
    assert [f.slot for f in await slotting.extract(unknown)] == [None, "supplier", None, None]


async def test_a_later_move_date_supersedes_the_earlier_memory_in_the_backend(
    embedder: OnnxEmbedder,
) -> None:
    said = (
        "We have to be moved in by the end of June.",
        "Our lease was extended, so September works now.",
    )
    for text in said:  # the rules alone give these memories no slot: nothing supersedes
        alone = await RuleExtractor().extract(ExtractionRequest(_said(text, T0), T0))
        assert alone
        assert all(f.slot is None for f in alone)
    clock = ManualClock(T0)
    extractor = FieldSlottingExtractor(
        RuleExtractor(), EmbeddingFieldReader(embedder, load_heads())
    )
    backend = InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=clock)
    ns = Namespace("buyer-1")
    meta = {"subject_kind": "home_buyer"}
    later = T0 + timedelta(days=30)
    try:
        await backend.ingest_transcript(
            ns,
            "s0",
            _said(said[0], T0),
            occurred_at=T0,
            metadata=meta,
        )
        clock.set(later)
        await backend.ingest_transcript(
            ns,
            "s1",
            _said(said[1], later),
            occurred_at=later,
            metadata=meta,
        )
        memories = await backend.list_memories(ns)
        current = [m.text for m in memories if m.is_latest]
        assert any("September" in t for t in current)
        assert not any("June" in t for t in current)
        hits = await backend.search(
            ns, SearchQuery("When do they need to move?", mode=SearchMode.MEMORIES, threshold=0.0)
        )
        assert hits
        assert "September" in hits[0].text
        assert not any("June" in h.text for h in hits)
    finally:
        await backend.close()
