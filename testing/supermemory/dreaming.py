"""How the local server turns a document into memories ("dreaming").

The real engine reads any text with an LLM; this one parses the conversational rendering the
adapter sends (`speaker: text` lines, continuation lines indented) back into messages, hands
them to the `Extractor` it was given (the same port our self-hosted backends use) and applies
the returned relations to the namespace's memory graph:

- `updates`: the current memory of the same slot stops being latest; the new one gets its
  version + 1 and remembers which memory it supersedes.
- `extends` / `derives`: edges to the named memories (local keys or known memory ids);
  `derives` results are inferences.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionContext,
    ExtractionRequest,
    KnownFact,
)
from factledger.application.memory.ports import Embedder, Extractor
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role
from factledger.testing.supermemory.model import Document, Memory, NamespaceState

ROLE_BY_SPEAKER = {role.value: role for role in Role} | {
    "user": Role.SUBJECT,
    "assistant": Role.AGENT,
}


def parse_transcript(content: str) -> list[Message]:
    """`speaker: text` lines; indented lines continue the previous message.

    Text with no recognised speaker at all is treated as the subject's own note.
    """
    messages: list[Message] = []
    for line in content.splitlines():
        speaker, _, text = line.partition(":")
        role = ROLE_BY_SPEAKER.get(speaker.strip().lower())
        if role is not None and not line.startswith((" ", "\t")):
            messages.append(Message(role=role, text=text.strip()))
        elif messages and line.strip():
            last = messages[-1]
            messages[-1] = Message(role=last.role, text=f"{last.text}\n{line.strip()}")
    if not messages and content.strip():
        messages.append(Message(role=Role.SUBJECT, text=content.strip()))
    return messages


def document_date(document: Document) -> datetime:
    if document.date:
        try:
            parsed = datetime.fromisoformat(document.date.replace("Z", "+00:00"))
        except ValueError:
            parsed = document.created_at
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return document.created_at


@dataclass(slots=True)
class Dreamer:
    extractor: Extractor
    embedder: Embedder
    new_id: Callable[[str], str]

    async def dream(self, state: NamespaceState, document: Document, text: str) -> None:
        """Mines `text` (the document's not-yet-processed part) and links the facts found."""
        known = [KnownFact(m.id, m.text, m.slot) for m in state.current_memories()]
        request = ExtractionRequest(
            transcript=parse_transcript(text),
            occurred_at=document_date(document),
            known=known,
            context=ExtractionContext.from_metadata(document.metadata),
        )
        facts = await self.extractor.extract(request)
        if not facts:
            return
        vectors = await self.embedder.embed([fact.text for fact in facts])
        local_ids: dict[str, str] = {}
        now = datetime.now(UTC)
        for fact, vector in zip(facts, vectors, strict=True):
            memory = Memory(
                id=self.new_id("mem"),
                text=fact.text,
                slot=fact.slot,
                document_id=document.id,
                metadata=dict(document.metadata),  # derived data inherits document metadata
                created_at=now,
                updated_at=now,
                vector=vector,
                is_inference=fact.is_inference or fact.relation is RelationKind.DERIVES,
            )
            local_ids[fact.key] = memory.id
            self._link(state, memory, fact, local_ids, now)
            state.memories[memory.id] = memory
            document.memory_ids.append(memory.id)

    def _link(
        self,
        state: NamespaceState,
        memory: Memory,
        fact: ExtractedFact,
        local_ids: dict[str, str],
        now: datetime,
    ) -> None:
        targets = tuple(
            target
            for target in (local_ids.get(ref, ref) for ref in fact.related_to)
            if target in state.memories
        )
        if fact.relation is RelationKind.UPDATES:
            # Resolved here, under the server's lock, so one slot keeps one current memory.
            previous = next(
                (m for m in state.current_memories() if fact.slot and m.slot == fact.slot),
                None,
            ) or next((state.memories[t] for t in targets if state.memories[t].is_latest), None)
            if previous is not None:
                previous.is_latest = False
                previous.updated_at = now
                memory.updates = previous.id
                memory.version = previous.version + 1
        elif fact.relation is RelationKind.EXTENDS:
            memory.extends = targets
        elif fact.relation is RelationKind.DERIVES:
            memory.derives = targets
