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

from factledger.adapters.extraction.learned.extractor import sentences_of
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
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
