"""Lifecycle correctness: updates, extensions, derivations, forgetting, expiry and isolation.

Every subject gets its own namespace; its sessions are ingested in order as transcripts, then
one fact is forgotten and one expired through the port, and the questions are asked. A hit is
attributed to a value by the value's made-up name occurring in its text.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta

from factledger.application.clocks import Clock
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import (
    IngestMode,
    Namespace,
    SearchHit,
    SearchMode,
    SearchQuery,
    namespace,
)
from factledger.bench.lifecycle_suite import SlotCheck, Subject
from factledger.bench.progress import Advance, no_progress
from factledger.domain.transcript import Message, Role

TOP_K = 10
ANSWER_K = 3  # the product's default recall limit
INGEST_CONCURRENCY = 8
AGENT_PROMPT = "Thanks for the update. Anything else I should know?"


@dataclass(slots=True)
class LifecycleScores:
    subjects: int = 0
    slot_checks: int = 0
    current_above_stale: int = 0  # the current value outranks every stale one (missing = last)
    current_in_answer: int = 0  # the current value is in the top ANSWER_K
    stale_only_answers: int = 0  # a stale value in the top ANSWER_K and the current one not
    facts_stored: int = 0
    inferred_facts: int = 0  # how many inferences exist, so a zero leak count means something
    inferred_leaks: int = 0  # inferred hits returned by default recall
    forgotten_checks: int = 0
    forgotten_recalled: int = 0
    expired_checks: int = 0
    expired_recalled: int = 0
    cross_namespace_queries: int = 0
    cross_namespace_leaks: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def _mentions(hit: SearchHit, token: str) -> bool:
    return re.search(rf"\b{re.escape(token)}\b", hit.text, re.IGNORECASE) is not None


def _rank(hits: Sequence[SearchHit], token: str) -> int:
    return next((i for i, hit in enumerate(hits) if _mentions(hit, token)), len(hits) + 1)


def subject_namespace(run_id: str, subject: Subject) -> Namespace:
    return namespace(f"bench-{run_id}-{subject.key}")


async def ingest_subject(backend: MemoryBackend, ns: Namespace, subject: Subject) -> None:
    for session in subject.sessions:
        transcript = [
            message
            for line in session.lines
            for message in (Message(Role.AGENT, AGENT_PROMPT), Message(Role.SUBJECT, line))
        ]
        await backend.ingest_transcript(
            ns,
            session.document_id,
            transcript,
            occurred_at=session.occurred_at,
            mode=IngestMode.INSTANT,
        )


async def _search(
    backend: MemoryBackend, ns: Namespace, text: str, *, everything: bool = False
) -> list[SearchHit]:
    query = SearchQuery(
        text=text,
        mode=SearchMode.MEMORIES,
        threshold=0.0,
        limit=TOP_K,
        include_inferred=everything,
        include_superseded=everything,
        include_forgotten=everything,
    )
    return await backend.search(ns, query)


async def _forget_and_expire(
    backend: MemoryBackend, ns: Namespace, subject: Subject, clock: Clock
) -> tuple[int, int]:
    """Forgets the allergy facts and expires the liking facts; returns how many of each."""
    facts = await backend.list_memories(ns, include_superseded=True, limit=100)
    to_forget = [f.id for f in facts if subject.forget_token in f.text.lower()]
    to_expire = [f.id for f in facts if subject.expire_token in f.text.lower()]
    if to_forget:
        await backend.forget(ns, to_forget, reason="benchmark: the subject asked")
    for memory_id in to_expire:
        await backend.expire(ns, memory_id, at=clock.now() - timedelta(seconds=1))
    return len(to_forget), len(to_expire)


async def _score_check(
    backend: MemoryBackend, ns: Namespace, check: SlotCheck, scores: LifecycleScores
) -> None:
    hits = await _search(backend, ns, check.question)
    current = _rank(hits, check.current)
    stale = min(_rank(hits, value) for value in check.stale)
    scores.slot_checks += 1
    scores.current_above_stale += current < stale
    scores.current_in_answer += current < ANSWER_K
    scores.stale_only_answers += stale < ANSWER_K <= current


async def score_subject(
    backend: MemoryBackend, ns: Namespace, subject: Subject, clock: Clock, scores: LifecycleScores
) -> None:
    """Everything except isolation, which needs every subject ingested first."""
    facts = await backend.list_memories(ns, include_superseded=True, include_forgotten=True)
    scores.subjects += 1
    scores.facts_stored += len(facts)
    scores.inferred_facts += sum(fact.is_inference for fact in facts)
    forgotten, expired = await _forget_and_expire(backend, ns, subject, clock)
    for check in subject.checks:
        await _score_check(backend, ns, check, scores)
    for question in (*subject.inference_questions, *(c.question for c in subject.checks)):
        hits = await _search(backend, ns, question)
        scores.inferred_leaks += sum(hit.is_inference for hit in hits)
    if forgotten:
        hits = await _search(backend, ns, subject.forget_question)
        scores.forgotten_checks += 1
        scores.forgotten_recalled += sum(_mentions(h, subject.forget_token) for h in hits)
    if expired:
        hits = await _search(backend, ns, subject.expire_question)
        scores.expired_checks += 1
        scores.expired_recalled += sum(_mentions(h, subject.expire_token) for h in hits)


async def run_lifecycle(
    backend: MemoryBackend,
    run_id: str,
    suite: Sequence[Subject],
    clock: Clock,
    *,
    advance: Advance = no_progress,
) -> LifecycleScores:
    """Ingests, scores and drops every subject; isolation is probed last, when every
    namespace holds its facts (each namespace is asked the next subject's questions)."""
    scores = LifecycleScores()
    spaces = [subject_namespace(run_id, subject) for subject in suite]
    try:
        gate = asyncio.Semaphore(INGEST_CONCURRENCY)

        async def ingest(ns: Namespace, subject: Subject) -> None:
            # Subjects are independent namespaces; each one's sessions still go in order.
            async with gate:
                await ingest_subject(backend, ns, subject)
            advance(1)

        await asyncio.gather(*(ingest(ns, s) for ns, s in zip(spaces, suite, strict=True)))
        for ns, subject in zip(spaces, suite, strict=True):
            await score_subject(backend, ns, subject, clock, scores)
            advance(1)
        await _score_isolation(backend, spaces, suite, scores)
    finally:
        for ns in spaces:
            await backend.drop_namespace(ns)
    return scores


async def _score_isolation(
    backend: MemoryBackend,
    spaces: Sequence[Namespace],
    suite: Sequence[Subject],
    scores: LifecycleScores,
) -> None:
    """Asks each namespace the next subject's questions, with every include flag on."""
    for position, ns in enumerate(spaces):
        other = suite[(position + 1) % len(suite)]
        if other is suite[position]:
            continue
        for question in (other.leak_question, *(check.question for check in other.checks)):
            hits = await _search(backend, ns, question, everything=True)
            scores.cross_namespace_queries += 1
            scores.cross_namespace_leaks += sum(
                any(_mentions(hit, token) for token in other.tokens) for hit in hits
            )
