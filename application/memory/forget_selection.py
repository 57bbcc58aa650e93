"""Which backend memories a forgotten field takes with it.

A field's memories are found two ways:

- by slot: memories whose slot is the field (or a variant of it: `intent:<field>`,
  `<field>:<value>`);
- by evidence: memories drawn from the words that evidenced or confirmed the field, named in
  `FactForgotten.evidence_refs` as (session id, message index) pairs. The sync ingests each
  session's transcript under `transcript_document_id`, so a memory is from those words when
  its `document_id` is that session's and its `source_indexes` meet the message indexes.
  A backend that does not declare `Capability.FACT_PROVENANCE` fills no `source_indexes`:
  then every memory of the evidencing sessions' documents goes; so does a memory of those
  documents with no source indexes on a backend that declares it.

Either way a memory whose slot names another field still in the profile stays: it is about
that field, which the subject did not ask to forget (a sentence may carry several fields).
Memories without a slot from those words go, since nothing says what else they are about.

A note that repeats a forgotten memory's value goes with it (`memory.value_repeats`).

Pure selection over `list_memories`: already-forgotten memories are not listed, so a retried
forget selects nothing new.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Mapping
from typing import Protocol
from uuid import UUID

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import transcript_document_id
from factledger.application.memory.types import Capability, MemoryFact, Namespace
from factledger.application.memory.value_repeats import notes_repeating
from factledger.domain.events import FactForgotten
from factledger.domain.said_lines import SAID_LINES

PAGE = 100


class Traced(Protocol):
    """What decides whether a memory goes with a field: its slot and the words it came from
    (a `MemoryFact`, or recall's view of a search hit)."""

    @property
    def slot(self) -> str | None: ...

    @property
    def document_id(self) -> str | None: ...

    @property
    def source_indexes(self) -> tuple[int, ...]: ...


def evidence_by_document(event: FactForgotten, subject_id: UUID) -> dict[str, frozenset[int]]:
    """The message indexes of the field's evidence, by the backend document of their session."""
    found: dict[str, set[int]] = {}
    for ref in event.evidence_refs:
        session_id, index = ref.get("session_id"), ref.get("message_index")
        if isinstance(session_id, str) and isinstance(index, int):
            found.setdefault(transcript_document_id(subject_id, session_id), set()).add(index)
    return {document: frozenset(indexes) for document, indexes in found.items()}


def slot_field(slot: str | None) -> str | None:
    """The profile field a memory's slot is about (`intent:supplier`, `phone:x` -> the field)."""
    if slot is None:
        return None
    return slot.removeprefix("intent:").split(":", 1)[0]


def is_forgotten_with(
    memory: Traced,
    field: str,
    said: Mapping[str, frozenset[int]],
    *,
    current_fields: Collection[str],
    provenance: bool,
) -> bool:
    """Whether `memory` goes with the forgotten `field` (see the module docstring)."""
    about = slot_field(memory.slot)
    if memory.slot == field or about == field:
        return True
    if about is not None and about in current_fields:
        return False
    indexes = said.get(memory.document_id or "")
    if indexes is None:
        return False
    # No source indexes (an undeclared capability, or a fact with no provenance of its own):
    # the memory may come from those words, so it goes.
    return (
        not provenance or not memory.source_indexes or not indexes.isdisjoint(memory.source_indexes)
    )


def fields_of(profile: Mapping[str, object]) -> frozenset[str]:
    """The field names of a profile as `ProfileVersions.profile_at` returns it."""
    fields = profile.get("fields")
    return frozenset(fields) if isinstance(fields, Mapping) else frozenset()


async def memories_to_forget(
    backend: MemoryBackend,
    ns: Namespace,
    event: FactForgotten,
    subject_id: UUID,
    current_fields: Collection[str],
) -> list[str]:
    """The ids of the (not yet forgotten) memories that go with the event's memory or field,
    and the notes that repeat their values (`memory.value_repeats`)."""
    memories = [memory async for memory in every_memory(backend, ns)]
    if event.memory_id is not None:
        # Forgotten by id whether or not it is listed: a retry, or one already expired.
        chosen = [event.memory_id]
    elif event.field is not None or event.evidence_refs:
        # A field's memories, or those drawn from the lines a request to forget what was
        # said named (ADR 0174: the reserved field, which no memory's slot is).
        field = SAID_LINES if event.field is None else event.field
        said = evidence_by_document(event, subject_id)
        provenance = Capability.FACT_PROVENANCE in backend.capabilities
        chosen = [
            memory.id
            for memory in memories
            if is_forgotten_with(
                memory, field, said, current_fields=current_fields, provenance=provenance
            )
        ]
    else:
        return []
    return chosen + notes_repeating(frozenset(chosen), memories)


async def every_memory(backend: MemoryBackend, ns: Namespace) -> AsyncIterator[MemoryFact]:
    """Every memory of the namespace not yet forgotten, superseded ones included, page by page."""
    offset = 0
    while True:
        page = await backend.list_memories(ns, include_superseded=True, limit=PAGE, offset=offset)
        for memory in page:
            yield memory
        if len(page) < PAGE:
            return
        offset += PAGE
