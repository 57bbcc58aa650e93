"""What a query asks about and what a memory speaks of: the shipped asked-topic head over the
shipped embedder (ADR 0098).

The texts below were written for this test and are not in the head's corpus
(`bench/judgement/data/asked_topics.yaml`): they pin readings a reader would agree with on
wordings the head never saw, and small talk reading as no topic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.field_reader.head import (
    ALL_KINDS,
    TOPICS_SHIPPED,
    TOPICS_SHIPPED_SHA256,
    HeadFileError,
    load_topic_heads,
)
from factledger.adapters.field_reader.topics import EmbeddingTopicReader
from factledger.application.memory.ports import Vectors


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder()


@pytest.fixture(scope="module")
def reader(embedder: OnnxEmbedder) -> EmbeddingTopicReader:
    return EmbeddingTopicReader(embedder, load_topic_heads())


def test_the_shipped_topic_head_is_the_pinned_file() -> None:
    assert hashlib.sha256(TOPICS_SHIPPED.read_bytes()).hexdigest() == TOPICS_SHIPPED_SHA256
    heads = load_topic_heads()
    assert set(heads.kinds) == {ALL_KINDS}
    assert {"location", "supplier", "budget", "pet"} <= set(heads.kinds[ALL_KINDS].classes)


def test_a_topic_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "topic_heads.npz"
    other.write_bytes(TOPICS_SHIPPED.read_bytes() + b"\0")
    with pytest.raises(HeadFileError, match="SHA-256"):
        load_topic_heads(other)


async def test_the_head_reads_wordings_it_never_saw(reader: EmbeddingTopicReader) -> None:
    texts = {
        "Which town are they in?": "location",
        "Who supplies their cartons?": "supplier",
        "How much have they got to play with, annually?": "budget",
        "has a dog called Biscuit": "pet",
        "works with Vireo Wraps": "supplier",
        "What's the weather like?": None,
    }

    assert await reader.read_topics(list(texts)) == list(texts.values())


async def test_over_another_embedder_the_head_reads_nothing() -> None:
    reader = EmbeddingTopicReader(HashingEmbedder(384), load_topic_heads())

    assert await reader.read_topics(["Which town are they in?"]) == [None]


async def test_a_query_is_read_as_its_text_and_carries_the_vector_it_was_read_from(
    reader: EmbeddingTopicReader, embedder: OnnxEmbedder
) -> None:
    text = "Which town are they in?"

    asked = await reader.read_query(text)

    assert asked.topic == (await reader.read_topics([text]))[0]
    assert asked.vector is not None
    assert asked.vector.text == text
    assert asked.vector.embedder is embedder
    embedded = (await embedder.embed([text]))[0]
    np.testing.assert_array_equal(asked.vector.values, embedded)


async def test_over_another_embedder_a_query_is_neither_read_nor_embedded() -> None:
    reader = EmbeddingTopicReader(HashingEmbedder(384), load_topic_heads())

    asked = await reader.read_query("Which town are they in?")

    assert (asked.topic, asked.vector) == (None, None)


class CountingEmbedder:
    """The shipped embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: OnnxEmbedder) -> None:
        self.inner, self.texts = inner, 0
        self.dimension, self.model_id = inner.dimension, inner.model_id

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        return await self.inner.embed(texts)


async def test_a_query_embedded_by_recall_is_read_without_embedding_it_again(
    embedder: OnnxEmbedder,
) -> None:
    counting = CountingEmbedder(embedder)
    reader = EmbeddingTopicReader(counting, load_topic_heads())
    text = "Which vendor do they use today?"
    fresh = await reader.read_query(text)
    assert counting.texts == 1
    assert fresh.vector is not None
    again = await reader.read_query(text, fresh.vector)
    assert counting.texts == 1  # the given vector is read, not embedded again
    assert again.topic == fresh.topic
    assert again.vector is fresh.vector
    # A vector of another text is not taken for this one's.
    await reader.read_query("Did they enjoy the weekend?", fresh.vector)
    assert counting.texts == 2
