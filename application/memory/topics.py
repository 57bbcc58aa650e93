"""What a recall query asks about, and what an unslotted memory speaks of, read by meaning.

A slot fact is a short note ("moved to Lucca", "works with Vireo Wraps"); the one who asks
about it rarely repeats its words ("Which town are they in?", "Who supplies their cartons?").
Memories-mode search lifts a fact by the keywords it shares with the query, and a slotted
fact's keywords hold its slot's name. A `TopicReader` (a head over the embedder's vectors,
fitted on labelled questions and notes) reads which topic a text speaks of: a slot name of
the rule extractor ("supplier", "location") or a kind of unslotted fact ("pet", "hobby").
Then:

- the query carries the topic it asks about (`SearchQuery.asked_about`, set by
  `AskedTopicMemoryBackend`), and its name joins the query's keywords, so the fact of that
  slot shares a keyword with the question that shares none of its words; a question about a
  topic no fact holds weighs that keyword as unheld, which dampens a chance word that a fact
  of another topic holds;
- an unslotted memory carries the topic it speaks of (`ExtractedFact.topic`, set by
  `TopicTaggingExtractor`, off the request path), and its name joins the memory's keywords
  ("has a dog called Biscuit" is found by "pet");
- every memory carries the words that questions about its slot or topic use
  (`ExtractedFact.asked_with`): fitted with the reader on its labelled questions and notes
  (the words a topic's texts say and other topics' seldom do), not written by hand, so a
  question that shares no word with the note, and whose topic the reader leaves unread,
  still meets it ("Where is she based?" and a location's "base").

Only where the reader is sure (its own threshold); a reader over another embedder reads
nothing. Keywords only: the facts' vectors, slots and supersession are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.forwarding import ForwardingMemoryBackend
from factledger.application.memory.ports import Extractor, MemoryBackend
from factledger.application.memory.types import (
    Namespace,
    QueryVector,
    SearchHit,
    SearchMode,
    SearchQuery,
)


@dataclass(frozen=True, slots=True)
class AskedQuery:
    """What a query's text asks about (None: not sure) and the vector it was read from (None:
    the reader embedded nothing), which the backend's search may then use as its own."""

    topic: str | None
    vector: QueryVector | None


class TopicReader(Protocol):
    """Which topic each text speaks of, when it is sure (None otherwise), and the words
    questions about a topic use (fitted with the reader on its labelled texts).

    - `read_query` reads one query's text as `read_topics` would, and gives the vector it
      embedded it into, tagged with the embedder that did (`QueryVector`); a `given` vector
      of the same text by its own embedder (one recall embedded already) is read, not
      embedded again.
    """

    async def read_topics(self, texts: Sequence[str]) -> list[str | None]: ...

    async def read_query(self, text: str, given: QueryVector | None = None) -> AskedQuery: ...

    def asked_with(self, topic: str) -> str | None: ...


class TopicTaggingExtractor:
    """Implements `Extractor` over `inner`: each unslotted memory takes the topic it speaks
    of, and every memory the words its topic or slot is asked about with."""

    def __init__(self, inner: Extractor, reader: TopicReader) -> None:
        self.inner = inner
        self.reader = reader

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        facts = await self.inner.extract(request)
        open_ = [n for n, f in enumerate(facts) if f.slot is None and f.topic is None]
        read = await self.reader.read_topics([facts[n].text for n in open_]) if open_ else []
        topics = dict(zip(open_, read, strict=True))
        tagged = []
        for n, fact in enumerate(facts):
            topic = topics.get(n, fact.topic)
            kind = fact.slot.split(":", 1)[0] if fact.slot else topic
            words = self.reader.asked_with(kind) if kind else None
            tagged.append(replace(fact, topic=topic, asked_with=words or fact.asked_with))
        return tagged


class AskedTopicMemoryBackend(ForwardingMemoryBackend):
    """Implements `MemoryBackend` over `inner`: a memories-mode search carries the topic its
    text asks about (`SearchQuery.asked_about`) and the vector the reader embedded its text
    into (`SearchQuery.vector`, so the search does not embed it again); every other call is
    delegated unchanged."""

    def __init__(self, inner: MemoryBackend, reader: TopicReader) -> None:
        super().__init__(inner)
        self.reader = reader

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        if query.mode is SearchMode.MEMORIES and query.asked_about is None and query.text:
            asked = await self.reader.read_query(query.text, query.vector)
            query = replace(query, asked_about=asked.topic, vector=asked.vector or query.vector)
        return await self.inner.search(namespace, query)
