"""LoCoMo evidence normalisation and parsing, following the dataset README's recipe."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from factledger.application.memory.types import HitKind, SearchHit
from factledger.bench.locomo import normalise_evidence, parse_conversation
from factledger.bench.workloads.locomo import covered_turns, record_of

KNOWN = {"D8:6", "D9:17", "D11:26", "D30:5", "D9:1", "D4:4", "D4:6"}


def test_evidence_is_normalised_as_the_readme_says() -> None:
    assert normalise_evidence(["D8:6; D9:17"], KNOWN) == {"D8:6", "D9:17"}
    assert normalise_evidence(["D:11:26"], KNOWN) == {"D11:26"}
    assert normalise_evidence(["D30:05"], KNOWN) == {"D30:5"}
    assert normalise_evidence(["(D9:1) D4:4,D4:6"], KNOWN) == {"D9:1", "D4:4", "D4:6"}
    assert normalise_evidence(["D", "D10:19"], KNOWN) == frozenset()


def raw_conversation() -> dict[str, Any]:
    turns = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Look!", "blip_caption": "a photo of a dog"},
    ]
    return {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
            "session_2_date_time": "2:00 pm on 9 May, 2023",  # no session 2: ignored
        },
        "qa": [
            {"question": "q1", "answer": "a", "evidence": ["D1:1"], "category": 4},
            {"question": "q2", "adversarial_answer": "a", "evidence": ["D1:1"], "category": 5},
            {"question": "q3", "answer": "a", "evidence": ["D"], "category": 3},
            {"question": "q4", "answer": 2022, "evidence": ["D1:2", "D1:1"], "category": 1},
        ],
    }


def test_parsing_keeps_scored_questions_with_evidence_only() -> None:
    conversation = parse_conversation(raw_conversation())
    assert [(q.index, q.category) for q in conversation.questions] == [(0, 4), (3, 1)]
    assert conversation.questions[1].evidence == {"D1:1", "D1:2"}


def test_turn_text_names_the_speaker_and_the_image_caption() -> None:
    conversation = parse_conversation(raw_conversation())
    first, second = conversation.turns
    assert first.text == "Ana: I adopted a cat."
    assert second.text == "Ben: Look! [shares image: a photo of a dog]"
    assert second.raw_text == "Look! [shares image: a photo of a dog]"
    assert first.occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def hit(**fields: Any) -> SearchHit:
    base: dict[str, Any] = {
        "id": "x",
        "text": "t",
        "score": 1.0,
        "kind": HitKind.MEMORY,
        "is_latest": True,
        "is_inference": False,
        "occurred_at": None,
        "document_id": None,
    }
    return SearchHit(**{**base, **fields})


def test_hits_map_back_to_turns_through_records_or_source_indexes() -> None:
    conversation = parse_conversation(raw_conversation())
    chunk = hit(id="chk_1", kind=HitKind.CHUNK, document_id="turn-D1-2")
    assert record_of(chunk) == "turn-D1-2"
    assert covered_turns(chunk, conversation) == {"D1:2"}
    fact = hit(document_id="session-1-speaker-0", source_indexes=(0, 1, 7))
    assert covered_turns(fact, conversation) == {"D1:1", "D1:2"}
    assert covered_turns(hit(document_id="elsewhere"), conversation) == frozenset()
