"""`SentenceCandidates`: the learned extractor's candidates without the rules (ADR 0125).

In place of the rule extractor under `LearnedExtractor`, every sentence the subject said is a
candidate memory as said, with no slot; the learned parts decide the rest. The heads drop
the sentences that are no statement of the subject's own (someone else's fact, small talk, a
question, a request to forget), the field heads of the memory backend slot what is left
(`application.memory.field_slots`), and a request with fields (the proposer's) is read by
the QA reader alone, asked every field: a sentence with no slot would feed no field, so
none is offered there and the heads judge nothing the proposer would drop.

No word decides here: sentences end at `.`, `!` or `?` as the learned extractor reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from factledger.adapters.extraction.learned.extractor import (
    sentences_of,
    standing,
    subject_sentences,
)
from factledger.adapters.extraction.rules.text import third_person
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.ports import Extractor
from factledger.domain.transcript import Role


@dataclass(frozen=True, slots=True)
class SentenceCandidates:
    """Implements `Extractor`: one unslotted fact per sentence of the subject's lines when the
    request asks no field, none when it does."""

    VERSION = 1

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        if request.fields:
            return []
        facts: list[ExtractedFact] = []
        for index, message in enumerate(request.transcript):
            if message.role is not Role.SUBJECT or not message.text.strip():
                continue
            for sentence in sentences_of(message.text.strip()):
                facts.append(ExtractedFact(f"s{len(facts)}", sentence, None, (index,)))
        return facts


@dataclass(frozen=True, slots=True)
class SentencesBesideRules:
    """Implements `Extractor`: the rules' facts and, for a request that asks no field (the
    memory backend's), every sentence of the subject's that no rule fact stands on, as an
    unslotted memory in the third person (ADR 0157).

    The rules write a memory only where one of their patterns holds; a sentence stating the
    subject's diet, title or dose in a wording nobody wrote a rule for was never a memory, so
    no search could find it. The learned parts above drop the sentences that are no statement
    of the subject's own, as they drop a rule's fact, and the field heads slot the rest. A
    request with fields (the proposer's) gets the rules' facts alone: an unslotted sentence
    feeds no field, and the proposals stay what the rules and the QA reader make of them."""

    rules: Extractor

    VERSION = 1

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        facts = await self.rules.extract(request)
        if request.fields:
            return facts
        said = subject_sentences(request.transcript)
        stood_on = {at for f in facts if (at := standing(f, said)) is not None}
        added = [
            ExtractedFact(f"s{n}", note, None, (index,))
            for n, (index, note) in enumerate(
                (index, third_person(sentence))
                for index, sentences in said.items()
                for at, sentence in enumerate(sentences)
                if (index, at) not in stood_on
            )
            if note.strip()
        ]
        return [*facts, *added]
