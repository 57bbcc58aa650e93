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
  ("has a dog called Biscuit" is found by "pet").

Only where the reader is sure (its own threshold); a reader over another embedder reads
nothing. Keywords only: the facts' vectors, slots and supersession are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.forwarding import ForwardingMemoryBackend
from factledger.application.memory.ports import Extractor, MemoryBackend
from factledger.application.memory.types import Namespace, SearchHit, SearchMode, SearchQuery


class TopicReader(Protocol):
    """Which topic each text speaks of, when it is sure; None otherwise."""

    async def read_topics(self, texts: Sequence[str]) -> list[str | None]: ...


class TopicTaggingExtractor:
    """Implements `Extractor` over `inner`, giving each unslotted memory the topic it speaks of."""

    def __init__(self, inner: Extractor, reader: TopicReader) -> None:
        self.inner = inner
        self.reader = reader

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        facts = await self.inner.extract(request)
        open_ = [n for n, f in enumerate(facts) if f.slot is None and f.topic is None]
        if not open_:
            return facts
        topics = await self.reader.read_topics([facts[n].text for n in open_])
        tagged = list(facts)
        for n, topic in zip(open_, topics, strict=True):
            if topic is not None:
                tagged[n] = replace(facts[n], topic=topic)
        return tagged


class AskedTopicMemoryBackend(ForwardingMemoryBackend):
    """Implements `MemoryBackend` over `inner`: a memories-mode search carries the topic its
    text asks about (`SearchQuery.asked_about`); every other call is delegated unchanged."""

    def __init__(self, inner: MemoryBackend, reader: TopicReader) -> None:
        super().__init__(inner)
        self.reader = reader

    async def search(self, namespace: Namespace, query: SearchQuery) -> list[SearchHit]:
        if query.mode is SearchMode.MEMORIES and query.asked_about is None and query.text:
            (topic,) = await self.reader.read_topics([query.text])
            if topic is not None:
                query = replace(query, asked_about=topic)
        return await self.inner.search(namespace, query)
