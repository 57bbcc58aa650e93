"""Contract with the default ONNX embedder: paraphrases are found, unrelated text is not."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.application.memory.ports import Embedder, MemoryBackend
from factledger.application.memory.types import Namespace, ProcessingStatus, SearchQuery
from factledger.testing.scripted_extractor import stated

Ingest = Callable[..., Awaitable[ProcessingStatus]]
NS = Namespace("subject-semantic")
FACTS = [
    "Switched the packaging supplier to Northwind",
    "Daughter starts school in September",
    "Warehouse budget is 40 thousand euros",
    "Allergic to peanuts",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    # Overrides the suite's hashing embedder: these tests are about meaning, not shared words.
    return OnnxEmbedder()


async def load(ingest: Ingest) -> None:
    facts = [stated(f"f{n}", text) for n, text in enumerate(FACTS)]
    await ingest(NS, "call-1", "A call about the business and the family", *facts)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("who makes their boxes?", FACTS[0]),
        ("when does the kid begin classes?", FACTS[1]),
        ("how much money for storage?", FACTS[2]),
        ("any food they cannot eat?", FACTS[3]),
    ],
)
async def test_a_paraphrase_finds_its_fact(
    backend: MemoryBackend, ingest: Ingest, question: str, expected: str
) -> None:
    await load(ingest)

    hits = await backend.search(NS, SearchQuery(question, threshold=0.2, limit=1))

    assert [h.text for h in hits] == [expected]


async def test_an_unrelated_question_stays_under_a_sensible_threshold(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await load(ingest)

    hits = await backend.search(NS, SearchQuery("volcanic rock formations", threshold=0.5))

    assert hits == []


async def test_a_question_about_the_current_supplier_gets_only_the_new_one(
    backend: MemoryBackend, ingest: Ingest
) -> None:
    await ingest(
        NS,
        "call-1",
        "We buy boxes from Acme",
        stated("f0", "Buys boxes from Acme", slot="supplier"),
    )
    await ingest(
        NS,
        "call-2",
        "We moved our box orders to Globex",
        stated("f0", "Buys boxes from Globex", slot="supplier", updates=True),
    )

    hits = await backend.search(NS, SearchQuery("which box supplier do they use?", threshold=0.3))

    assert [h.text for h in hits] == ["Buys boxes from Globex"]
