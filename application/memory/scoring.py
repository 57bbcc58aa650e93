"""Scoring helpers shared by the self-hosted backends: tokens, BM25 and reciprocal rank fusion.

Pure functions over plain Python and numpy, so the in-memory and pgvector backends rank the
same way and the contract suite sees the same scores from both.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
from stopwords import get_stopwords

from factledger.application.memory.inflection import KEYWORD_LANGUAGE
from factledger.application.memory.ports import Vectors

_TOKEN = re.compile(r"[a-z0-9]+")
# Words too common to say anything about a match (without them every "the" is a keyword hit):
# the function words of the keywords' language, from the `stopwords` library's list (ISC;
# shipped in its wheel; for English, Snowball's list of pronouns, auxiliaries, determiners
# and prepositions). Longer general-purpose lists also drop words that name things ("home",
# "work", "research", "year"), and cost LoCoMo's recall@10 0.739 -> 0.706 (ADR 0086).
# A contraction's entry ("it's") is left out: what the apostrophe leaves ("s", "re") was
# measured as stopwords before and raised the wrong notes of spoken questions.
STOPWORDS = frozenset(w.lower() for w in get_stopwords(KEYWORD_LANGUAGE) if w.isalpha())
RRF_K = 60


def keyword_tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric words without stopwords."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def bm25_scores(
    query_tokens: Sequence[str],
    documents: Sequence[Counter[str]],
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> list[float]:
    """Okapi BM25 of each document (a term-count Counter) for the query; 0.0 means no match."""
    n = len(documents)
    if n == 0 or not query_tokens:
        return [0.0] * n
    lengths = [sum(doc.values()) for doc in documents]
    average = (sum(lengths) / n) or 1.0
    terms = set(query_tokens)
    frequency = {t: sum(1 for doc in documents if t in doc) for t in terms}
    idf = {t: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}
    scores: list[float] = []
    for doc, length in zip(documents, lengths, strict=True):
        score = 0.0
        for term in terms:
            tf = doc.get(term, 0)
            if tf:
                score += idf[term] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average))
        scores.append(score)
    return scores


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], *, k: int = RRF_K
) -> dict[str, float]:
    """Fuses ranked id lists into scores in (0, 1]: 1.0 means first in every list.

    Plain RRF sums 1/(k + rank); dividing by the best possible sum makes the score
    comparable across queries, so a caller can still show it as a similarity-like number.
    """
    best = len(rankings) / (k + 1)
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return {item: score / best for item, score in fused.items()} if best else fused


def cosine_scores(matrix: Vectors, query: Vectors) -> Vectors:
    """Dot products of L2-normalised rows with one L2-normalised query vector.

    Each row's score is summed by the same loop whatever the row's position, so equal vectors
    score exactly alike and a subset of rows scores as it does within the whole matrix: ties
    are real ties, and rank by id. numpy's BLAS product (`@`) does not promise that (it
    splits the rows into blocks summed by different kernels, and a lone row by another), so two
    copies of one vector could rank by where they sit."""
    if matrix.shape[0] == 0:
        return np.zeros(0, dtype=np.float32)
    scores: Vectors = np.einsum("ij,j->i", matrix, query.reshape(-1))
    return scores


def rank_desc(scores: Mapping[str, float]) -> list[str]:
    """Ids by score, highest first; ties broken by id so every run orders the same way."""
    return sorted(scores, key=lambda item: (-scores[item], item))
