"""The hashing embedder is deterministic, normalised and purely lexical."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from factledger.adapters.embedding.hashing import HashingEmbedder


async def test_vectors_are_unit_length_and_of_the_declared_width() -> None:
    embedder = HashingEmbedder(dimension=128)

    vectors = await embedder.embed(["Supplier B delivers on Sundays", "tea", "x y z"])

    assert vectors.shape == (3, 128)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


async def test_shared_words_score_higher_than_no_shared_words() -> None:
    embedder = HashingEmbedder()

    a, b, c = await embedder.embed(
        ["we buy from supplier b", "supplier b is our vendor", "the weather is cold"]
    )

    assert float(a @ b) > 0.2
    assert abs(float(a @ c)) < float(a @ b)


async def test_text_without_words_is_the_zero_vector() -> None:
    (vector,) = await HashingEmbedder().embed(["!!! ..."])

    assert not vector.any()


def test_the_same_text_embeds_identically_in_another_process() -> None:
    code = (
        "from factledger.adapters.embedding.hashing import HashingEmbedder;"
        "print(HashingEmbedder(32).embed_sync(['stable across runs']).tolist())"
    )
    other = subprocess.run(  # noqa: S603 - fixed interpreter and code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()

    assert other == str(HashingEmbedder(32).embed_sync(["stable across runs"]).tolist())
