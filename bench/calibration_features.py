"""The two signals memories mode fuses, per labelled pair: what a fused calibration is fitted on.

`calibration_scores.backend_scores` reads the fused score a backend serves; a fit on the two
signals apart (ADR 0040) needs the cosine and the keyword coverage of each pair, computed here
with the functions both self-hosted backends score with (`application.memory.lexical`), over
the same namespace each question gets there: exactly its labelled facts, one message each.
`fused_score(cosine, coverage)` is then the backend's score (a test checks it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factledger.application.memory.calibration import LabelledPair
from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.lexical import (
    coverage,
    document_frequency,
    extraction_terms,
    idf_weights,
    query_terms,
    vector_text,
)
from factledger.application.memory.ports import Embedder
from factledger.bench.calibration_scores import questions
from factledger.domain.transcript import Message, Role


async def pair_features(
    embedder: Embedder, pairs: Sequence[LabelledPair]
) -> list[tuple[float, float]]:
    """Each pair's (cosine, keyword coverage), in the order of `pairs`."""
    texts = list(dict.fromkeys(t for p in pairs for t in (p.question, vector_text(p.fact, None))))
    vectors = await embedder.embed(texts)
    row = {text: i for i, text in enumerate(texts)}
    features: dict[tuple[str, str, str], tuple[float, float]] = {}
    for facts in questions(pairs):
        messages = [Message(Role.SUBJECT, p.fact) for p in facts]
        extracted = [ExtractedFact(f"f{i}", p.fact, None, (i,)) for i, p in enumerate(facts)]
        held = [set(t) for t in extraction_terms(extracted, messages, None)]
        terms = query_terms(facts[0].question)
        weights = idf_weights(terms, document_frequency(terms, held), len(held))
        asked = vectors[row[facts[0].question]]
        for p, keywords in zip(facts, held, strict=True):
            cosine = min(1.0, float(np.float32(vectors[row[vector_text(p.fact, None)]] @ asked)))
            features[(p.group, p.question, p.fact)] = (cosine, coverage(terms, weights, keywords))
    return [features[(p.group, p.question, p.fact)] for p in pairs]
