"""Memories slotted by the profile field they speak about, so a later value supersedes.

The extractor draws a memory from each of the subject's sentences; most carry no slot when
its patterns do not know the wording ("Skipton upped the agreement, so we can go to 475"), and
a memory without a slot is never superseded: the earlier value stays a current memory and
recall offers it beside, or above, the later one. This decorator asks a `FieldReader` which
field of the subject's kind each unslotted memory states and gives it that field as its slot.
The backend then keeps one current memory per slot as it does for the extractor's own slots
(the later one supersedes, recall dates it "previously ..."), on every backend alike.

- Only a field that holds one value is a slot: a second allergy does not replace the first.
- Only where the reader is sure (its own threshold); a sentence that speaks of two fields, or
  of none, stays unslotted, as before.
- Only the subject's stated memories: an inference or a fact the extractor already linked
  (extends, derives) keeps what the extractor said.
- A kind the reader does not know, or a transcript without a kind, is left as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.ports import Extractor
from factledger.application.memory.types import RelationKind


class FieldReader(Protocol):
    """Which one-valued profile field of a kind each text states, when it is sure."""

    def knows(self, kind: str) -> bool: ...

    async def read(self, kind: str, texts: Sequence[str]) -> list[str | None]: ...


_LINKED = (RelationKind.EXTENDS, RelationKind.DERIVES)


class FieldSlottingExtractor:
    """Implements `Extractor` over `inner`, slotting its unslotted memories by field."""

    def __init__(self, inner: Extractor, reader: FieldReader) -> None:
        self.inner = inner
        self.reader = reader

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        facts = await self.inner.extract(request)
        kind = request.context.subject_kind
        if kind is None or not self.reader.knows(kind):
            return facts
        open_ = [n for n, f in enumerate(facts) if _unslotted(f)]
        if not open_:
            return facts
        fields = await self.reader.read(kind, [facts[n].text for n in open_])
        slotted = list(facts)
        for n, field in zip(open_, fields, strict=True):
            if field is not None:
                slotted[n] = replace(facts[n], slot=field)
        return slotted


def _unslotted(fact: ExtractedFact) -> bool:
    return (
        fact.slot is None
        and not fact.is_inference
        and fact.relation not in _LINKED
        and not fact.related_to
    )
