"""PrefEval "said vs inferred": the dataset README's cross-topic protocol through the port.

For each entry x of topic A, with the other topic B as distractors:
- said: a fresh namespace holds x's stated preference and every preference of B, one record
  each; gold is x's preference (or an entry of A with identical text);
- inferred: a fresh namespace holds x's four-message exchange and every exchange of B, one
  record per message in order; gold is x's `user_selection` (strict) or any of x's four
  messages (lenient).
Each namespace is dropped after its query, so a run leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, SearchMode, SearchQuery, namespace
from factledger.bench.metrics import ScoreTable, score_ranking
from factledger.bench.progress import Advance, no_progress
from factledger.bench.workloads.locomo import record_of

TOPICS = ("travel_restaurant", "entertain_shows")
TURN_KEYS = ("query", "assistant_options", "user_selection", "assistant_acknowledgment")
TOP_K = 10
WRITE_CONCURRENCY = 8


@dataclass(frozen=True, slots=True)
class PrefEntry:
    topic: str
    index: int
    preference: str
    question: str
    turns: tuple[str, str, str, str]  # in TURN_KEYS order


def load_topic(directory: Path, topic: str) -> list[PrefEntry]:
    with (directory / f"{topic}.json").open(encoding="utf-8") as handle:
        raw: list[dict[str, Any]] = json.load(handle)
    return [
        PrefEntry(
            topic,
            index,
            str(item["preference"]),
            str(item["question"]),
            (
                str(item["conversation"]["query"]),
                str(item["conversation"]["assistant_options"]),
                str(item["conversation"]["user_selection"]),
                str(item["conversation"]["assistant_acknowledgment"]),
            ),
        )
        for index, item in enumerate(raw)
    ]


def load_prefeval(directory: Path) -> dict[str, list[PrefEntry]]:
    return {topic: load_topic(directory, topic) for topic in TOPICS}


@dataclass(slots=True)
class PrefEvalScores:
    said: ScoreTable
    strict: ScoreTable
    lenient: ScoreTable


async def _ranked_ids(
    backend: MemoryBackend, ns: Namespace, text: str, mode: SearchMode
) -> list[frozenset[str]]:
    hits = await backend.search(ns, SearchQuery(text=text, mode=mode, threshold=0.0, limit=TOP_K))
    return [frozenset({record_of(hit)}) for hit in hits]


def preference_id(entry: PrefEntry) -> str:
    return f"pref-{entry.topic}-{entry.index}"


def turn_id(entry: PrefEntry, turn: int) -> str:
    return f"turn-{entry.topic}-{entry.index}-{turn}"


async def _put_all(backend: MemoryBackend, ns: Namespace, items: list[tuple[str, str]]) -> None:
    # A few writes in flight: remote engines answer each write after a round trip or two.
    gate = asyncio.Semaphore(WRITE_CONCURRENCY)

    async def put(item_id: str, text: str) -> None:
        async with gate:
            await backend.put_record(ns, item_id, "prefeval.item", json.dumps(text))

    await asyncio.gather(*(put(item_id, text) for item_id, text in items))


async def score_entry(
    backend: MemoryBackend,
    run_id: str,
    x: PrefEntry,
    distractors: Sequence[PrefEntry],
    mode: SearchMode,
    scores: PrefEvalScores,
) -> None:
    """Both namespaces of one entry: ingest, query with x's question, score, drop."""
    said_ns = namespace(f"bench-{run_id}-pref-said-{x.topic}-{x.index}")
    # A seeded shuffle puts x at a fixed but arbitrary position, so an engine that breaks ties
    # by insertion order gains nothing from x being written first.
    entries = [x, *distractors]
    random.Random(f"{x.topic}-{x.index}").shuffle(entries)
    said_items = [(preference_id(e), e.preference) for e in entries]
    inferred_ns = namespace(f"bench-{run_id}-pref-inferred-{x.topic}-{x.index}")
    inferred_items = [
        (turn_id(e, turn), text) for e in entries for turn, text in enumerate(e.turns)
    ]
    try:
        await _put_all(backend, said_ns, said_items)
        ranked = await _ranked_ids(backend, said_ns, x.question, mode)
        scores.said.add(x.topic, score_ranking(ranked, frozenset({preference_id(x)})))
        await _put_all(backend, inferred_ns, inferred_items)
        ranked = await _ranked_ids(backend, inferred_ns, x.question, mode)
        strict = frozenset({turn_id(x, TURN_KEYS.index("user_selection"))})
        lenient = frozenset(turn_id(x, turn) for turn in range(len(TURN_KEYS)))
        scores.strict.add(x.topic, score_ranking(ranked, strict))
        scores.lenient.add(x.topic, score_ranking(ranked, lenient))
    finally:
        await backend.drop_namespace(said_ns)
        await backend.drop_namespace(inferred_ns)


async def run_prefeval(
    backend: MemoryBackend,
    run_id: str,
    topics: dict[str, list[PrefEntry]],
    *,
    mode: SearchMode,
    per_topic: int | None = None,
    advance: Advance = no_progress,
) -> PrefEvalScores:
    """The cross-topic protocol over both topics (the first `per_topic` entries of each)."""
    scores = PrefEvalScores(ScoreTable(), ScoreTable(), ScoreTable())
    for topic_a, entries in topics.items():
        distractors = [e for topic, items in topics.items() if topic != topic_a for e in items]
        for x in entries[:per_topic]:
            await score_entry(backend, run_id, x, distractors, mode, scores)
            advance(1)
    return scores
