"""The record-search bench counts a hit only where a record holding the answer ranks."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.types import StoredRecord
from factledger.bench.record_search import SubjectRecords, score_records
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor

SET = {
    "subjects": [
        {
            "id": "s00",
            "name": "Ana Test",
            "part": "dev",
            "sessions": [
                {"at": "2026-01-01T10:00:00+00:00", "lines": [["subject", "We ship with DPD."]]}
            ],
            "questions": [
                {"topic": "courier", "text": "Which courier ships for them?", "answer": "DPD"},
                {"topic": "pet", "text": "What is their dog called?", "answer": "Biscuit"},
            ],
        }
    ]
}


def proposal(record_id: str, field: str, value: str, quote: str) -> StoredRecord:
    body = {
        "change_id": record_id,
        "field": field,
        "operation": "set",
        "value": {"type": "text", "value": value},
        "evidence": {"quote": quote, "session_id": "s00-0", "message_index": 0},
    }
    return StoredRecord(record_id, "change_proposed", json.dumps(body, sort_keys=True), {})


async def test_hits_count_the_first_record_holding_the_answer(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump(SET), encoding="utf-8")
    records = (
        proposal("p1", "courier", "DPD", "We ship with DPD."),
        proposal("p2", "budget", "35k", "Our budget is 35k."),
    )
    backend = InMemoryMemoryBackend(
        extractor=ScriptedExtractor(), embedder=HashingEmbedder(), clock=ManualClock()
    )

    tallies = await score_records(backend, "t", path, [SubjectRecords("s00", records)])

    # The pet question has no record holding its answer: it is left out, not counted a miss.
    assert {key: t.questions for key, t in tallies.items()} == {
        (index, mode, "dev"): 1
        for index in ("body", "search-text")
        for mode in ("chunks", "hybrid")
    }
    for mode in ("chunks", "hybrid"):
        found = tallies[("search-text", mode, "dev")]
        assert (found.hits, found.mrr) == ({1: 1, 3: 1, 10: 1}, 1.0)
