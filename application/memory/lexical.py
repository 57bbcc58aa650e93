"""What a fact is indexed under, beside its own words, and how memories-mode search weighs it.

An extracted fact is a short paraphrase ("Researched adoption agencies"): it drops the
subject's name and most of the words the subject used, which are the words a question tends
to repeat. So every self-hosted backend indexes, with each fact:

- for its vector, the fact prefixed by the subject's label when the transcript's metadata
  gives one (`SUBJECT_LABEL_KEY`) and by the name of its slot when it has one: "Caroline:
  Researched adoption agencies", "supplier: works with Bramble Boxes" (a question
  about "their vendor" or "where they are based" meets the slot's name where the short note
  alone, "moved to Lucca", says little of what it is about);
- for its keywords, the label, the slot's name (or, for an unslotted fact, the name of the
  topic it speaks of, read by meaning: `application.memory.topics`), the fact, the source
  sentences it came from and
  the question each of them answers (`keyword_source`), less the words another fact
  of the same message says (`extraction_terms`); every word folded to its lemma by the
  lemmatiser library (`application.memory.inflection`), the query's words alike, and the
  library's function words left out of both (`scoring.STOPWORDS`), as are the words that
  name nothing a fact holds, fitted from labelled conversations ("now", "currently",
  "still": `application.memory.unasked_words`, ADR 0118, in place of the
  hand-written words and phrases of when of ADR 0040 and 0046); and, for a fact that
  replaces its slot's current fact, the
  words of what the slot is for that fact's note said, never a value's
  (`application.memory.succession`).

Memories-mode search then scores `min(1, cosine + LEXICAL_WEIGHT * coverage)`, where coverage
is the share of the query's keyword weight (IDF over the searched facts; a word no searched
fact holds weighs `UNHELD_WEIGHT` of its IDF) that the fact's keywords hold. The score stays
similarity-like (0..1, a pure vector match keeps its cosine), so the recall threshold still
means what it meant; a keyword match can only lift a fact. The form was chosen on the LoCoMo
development conversations; the weight is the one a logistic fit of the
calibration pairs on cosine and coverage apart gives (`calibration.fit_fused`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

from factledger.application.memory.extraction import ExtractedFact
from factledger.application.memory.inflection import fold_inflection
from factledger.application.memory.scoring import keyword_tokens
from factledger.application.memory.types import Metadata
from factledger.application.memory.unasked_words import packaged_unasked_words
from factledger.domain.transcript import Message, Role
from factledger.domain.values import field_words

SUBJECT_LABEL_KEY = "subject_label"
INTENT_SLOT = "intent"
# The fused fit of the calibration pairs: the weight that, with the cosine, best separates
# relevant from irrelevant pairs.
LEXICAL_WEIGHT = 0.675
# A query keyword that no searched fact holds weighs this share of its IDF.
UNHELD_WEIGHT = 0.5
# Words that name nothing a fact holds ("now", "still", "currently"), counted on labelled
# conversations rather than listed (ADR 0118): neither queries nor facts are keyed by them.
UNASKED_WORDS = packaged_unasked_words()


def subject_label(metadata: Metadata | None) -> str | None:
    """The subject's label from a transcript's metadata, if the caller gave a usable one."""
    value = (metadata or {}).get(SUBJECT_LABEL_KEY)
    return value.strip() or None if isinstance(value, str) else None


def slot_words(slot: str | None) -> str | None:
    """The name of a fact's slot as words ("job_title" -> "job title"; a keyed slot
    "allergy:peanuts" -> "allergy"). An intent's slot names what is intended, not a kind of
    fact, and gives none."""
    if not slot:
        return None
    name = slot.split(":", 1)[0]
    if name == INTENT_SLOT:
        return None
    return field_words(name).strip() or None


def vector_text(fact_text: str, label: str | None, slot: str | None = None) -> str:
    """What a fact's vector is computed from: the fact, carrying its subject when known and
    the name of its slot when it has one."""
    prefix = ", ".join(part for part in (label, slot_words(slot)) if part)
    return f"{prefix}: {fact_text}" if prefix else fact_text


def source_text(transcript: Sequence[Message], source_indexes: Sequence[int]) -> str:
    """The subject's own sentences a fact came from (agent lines never describe the subject)."""
    return " ".join(
        transcript[i].text
        for i in dict.fromkeys(source_indexes)
        if 0 <= i < len(transcript) and transcript[i].role is Role.SUBJECT
    )


def answered_questions(transcript: Sequence[Message], source_indexes: Sequence[int]) -> str:
    """The other side's question right before each of the subject's source sentences.

    A reply rarely repeats what it answers ("Adoption agencies, it's been a dream" to "What
    are you researching?"), and a later question about it tends to use the asker's words.
    Only a question: the line before a reply may be the other side's own news, which is not
    what the subject's sentence is about."""
    return " ".join(
        transcript[i - 1].text
        for i in dict.fromkeys(source_indexes)
        if 0 < i < len(transcript)
        and transcript[i].role is Role.SUBJECT
        and transcript[i - 1].role is not Role.SUBJECT
        and "?" in transcript[i - 1].text
    )


def keyword_source(transcript: Sequence[Message], source_indexes: Sequence[int]) -> str:
    """What a fact is found by beside its own words: its source and the questions it answers."""
    return " ".join(
        part
        for part in (
            source_text(transcript, source_indexes),
            answered_questions(transcript, source_indexes),
        )
        if part
    )


def keywords(text: str) -> list[str]:
    """The keywords of a text as memories-mode search matches them: its words less the
    stopwords, each folded to its lemma; lemmas that name nothing a fact holds ("now",
    "still") left out (`UNASKED_WORDS`)."""
    folded = (fold_inflection(t) for t in keyword_tokens(text))
    return [t for t in folded if t not in UNASKED_WORDS]


def lexical_terms(
    fact_text: str,
    source: str,
    label: str | None,
    slot: str | None = None,
    *,
    topic: str | None = None,
    asked_with: str | None = None,
    claimed: Collection[str] = (),
) -> Counter[str]:
    """The keywords a fact is found by: its label, its slot's name (or, unslotted, its
    topic's) and the words its kind is asked about with (`application.memory.topics`), its
    words and its source's words (`keyword_source`), less the source words in `claimed`
    that the fact does not say itself (`extraction_terms`)."""
    kind = slot_words(slot) if slot else slot_words(topic)
    own = keywords(" ".join(p for p in (label, kind, asked_with, fact_text) if p))
    held = set(own)
    return Counter([*own, *(t for t in keywords(source) if t in held or t not in claimed)])


def extraction_terms(
    facts: Sequence[ExtractedFact], transcript: Sequence[Message], label: str | None
) -> list[Counter[str]]:
    """The keywords of each fact of one extraction (`lexical_terms`). A sentence often says two
    things ("I'm allergic to peanuts. My favourite hobby is sailing."): a word of the source that
    another fact drawn from the same message says, and this one does not, is that fact's, so a
    question about the allergy does not lift the hobby."""
    said = [set(keywords(f.text)) for f in facts]
    by_message: dict[int, list[int]] = {}
    for n, fact in enumerate(facts):
        for index in set(fact.source_indexes):
            by_message.setdefault(index, []).append(n)
    terms = []
    for n, fact in enumerate(facts):
        siblings = {m for i in set(fact.source_indexes) for m in by_message[i] if m != n}
        claimed = set().union(*(said[m] for m in siblings))
        source = keyword_source(transcript, fact.source_indexes)
        terms.append(
            lexical_terms(
                fact.text,
                source,
                label,
                fact.slot,
                topic=fact.topic,
                asked_with=fact.asked_with,
                claimed=claimed,
            )
        )
    return terms


def query_terms(text: str, asked_about: str | None = None) -> list[str]:
    """The distinct keywords of a query, in order, then those of the name of the topic it asks
    about (`SearchQuery.asked_about`), which a fact of that slot or topic holds."""
    return list(dict.fromkeys([*keywords(text), *keywords(slot_words(asked_about) or "")]))


def idf_weights(terms: Sequence[str], document_frequency: dict[str, int], n: int) -> list[float]:
    """BM25's IDF of each term among `n` searched facts; a term none of them holds (the
    subject's own name, which no note repeats, or "chat" in "anything I could chat about?")
    weighs `UNHELD_WEIGHT` of it. Such a term lifts no fact, so it cannot tell which fact
    answers; it still weighs, since a question mostly about what no fact holds may have no
    answer here."""
    weights = []
    for t in terms:
        held = document_frequency.get(t, 0)
        idf = math.log(1.0 + (n - held + 0.5) / (held + 0.5))
        weights.append(idf if held > 0 else UNHELD_WEIGHT * idf)
    return weights


def coverage(terms: Sequence[str], weights: Sequence[float], held: Collection[str]) -> float:
    """The share of the query's keyword weight that a fact's keywords hold, in [0, 1]."""
    total = sum(weights)
    if total <= 0.0:
        return 0.0
    return sum(w for t, w in zip(terms, weights, strict=True) if t in held) / total


def fused_score(cosine: float, keyword_coverage: float) -> float:
    """Memories-mode relevance: the cosine, lifted by the keywords a fact shares with the query."""
    return min(1.0, cosine + LEXICAL_WEIGHT * keyword_coverage)


def fused_scores(
    cosines: npt.NDArray[np.float64], keyword_coverage: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """`fused_score` over arrays (float64 in, float64 out: the same values, element by element)."""
    scores: npt.NDArray[np.float64] = np.minimum(1.0, cosines + LEXICAL_WEIGHT * keyword_coverage)
    return scores


def lift_by_keywords(
    scores: npt.NDArray[np.float64],
    terms: Sequence[str],
    holders: Sequence[npt.NDArray[np.int64]],
    searched: int,
) -> None:
    """Replaces, in `scores` (the cosines of the searched facts, by position), each holder's
    cosine by its fused score; `holders` are the positions of the visible facts holding each
    of `terms`, `searched` how many facts are visible. A fact holding no term keeps its
    cosine. The floats are those of scoring fact by fact (`keyword_coverage`)."""
    held = keyword_coverage(len(scores), terms, holders, searched)
    if held is None:
        return
    lifted = np.flatnonzero(held)
    scores[lifted] = fused_scores(scores[lifted], held[lifted])


def keyword_coverage(
    size: int,
    terms: Sequence[str],
    holders: Sequence[npt.NDArray[np.int64]],
    searched: int,
) -> npt.NDArray[np.float64] | None:
    """`coverage` of each of `size` facts by position (0 for a fact holding no term); None
    when the terms weigh nothing. `holders` are the positions of the visible facts holding
    each term, `searched` how many facts are visible (the IDF's population). Weights are added
    in query order, as `coverage` adds them, so the floats are the same (the array searches of
    the in-memory backend and of a pgvector mirror)."""
    frequency = {t: len(p) for t, p in zip(terms, holders, strict=True)}
    weights = idf_weights(terms, frequency, searched)
    total = sum(weights)
    if total <= 0.0:
        return None
    held = np.zeros(size, dtype=np.float64)
    for positions, weight in zip(holders, weights, strict=True):
        held[positions] += weight
    held /= total
    return held


def document_frequency(
    terms: Sequence[str], documents: Sequence[Collection[str]]
) -> dict[str, int]:
    """How many of the searched facts hold each query term."""
    return {t: sum(1 for doc in documents if t in doc) for t in terms}
