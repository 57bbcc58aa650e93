"""Where a backend memory was said: the recorded transcript lines it was drawn from.

A memory names its session's transcript document (`transcript_document_id`) and, on a backend
that declares `Capability.FACT_PROVENANCE`, the message indexes it came from. Forgetting the
memory by id forgets those lines' words too (their keys go). A backend that names no indexes,
or cannot be asked in time, gives no lines: the memory is still forgotten, its words stay
until the field they evidence is forgotten or the subject erased.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

import structlog

from factledger.application.errors import ApplicationError
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for, transcript_document_id

LOOKUP_TIMEOUT_S = 2.0
log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class DrawnFrom:
    """What a memory's forget must know of it: the recorded lines it was drawn from, and its
    own text (a forget's reason must not say it again); empty when the backend does not know."""

    lines: tuple[tuple[str, int], ...] = ()
    text: str | None = None


async def memory_drawn_from(
    backend: MemoryBackend | None,
    subject_id: UUID,
    memory_id: str,
    session_ids: Iterable[str],
    *,
    timeout_s: float = LOOKUP_TIMEOUT_S,
) -> DrawnFrom:
    """The (session id, message index) pairs the memory was drawn from, among the subject's
    recorded sessions, and its text; empty when the backend does not know, or does not answer
    in time."""
    if backend is None:
        return DrawnFrom()
    try:
        async with asyncio.timeout(timeout_s):
            memory = await backend.get_memory(namespace_for(subject_id), memory_id)
    except (ApplicationError, TimeoutError) as exc:
        log.warning(
            "forget.memory_sources_unknown",
            subject_id=str(subject_id),
            error_type=type(exc).__name__,
        )
        return DrawnFrom()
    if memory.document_id is None:
        return DrawnFrom(text=memory.text)
    by_document = {transcript_document_id(subject_id, s): s for s in session_ids}
    session_id = by_document.get(memory.document_id)
    if session_id is None:
        return DrawnFrom(text=memory.text)
    lines = tuple((session_id, index) for index in sorted(set(memory.source_indexes)))
    return DrawnFrom(lines, memory.text)
