"""`QaReadingJudge`: a `SentenceJudge` whose field statements come from the QA reader.

Everything else (whom a sentence is about, hedges, forget requests, corrections, replies,
how close texts are to a sentence) is the inner judge's. The reader's statements are the words
of the value, not the clause around it, and their `p` is the margin over "no value" (ADR 0107).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from factledger.adapters.judgement.held_change import HeldChangeHead
from factledger.adapters.judgement.qa_reader.agreement import agreed_statements
from factledger.adapters.judgement.qa_reader.held_changes import changed_statements
from factledger.adapters.judgement.qa_reader.reader import QaFieldReader
from factledger.adapters.judgement.qa_reader.value_fits import fitted, reaching
from factledger.adapters.judgement.value_fit import ValueFitHead
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.judgement.types import FieldStatement, Judgement, Reply
from factledger.domain.transcript import Message


@dataclass(frozen=True, slots=True)
class QaReadingJudge:
    inner: SentenceJudge
    reader: QaFieldReader
    # Answers below the reader's floor, from this one, kept where the inner judge's clause
    # reading agrees (ADR 0122); None: the reader's floor alone.
    agreement_floor: float | None = None
    # Reads whether a held field's answer under the held floor states another value than the
    # one held (ADR 0137); None: the held floor alone.
    held_change: HeldChangeHead | None = None
    # Reads whether an unheld field's answer is the kind of words the field holds, keeping
    # one over the bar unless it doubts it and one under it where it is sure (ADR 0211);
    # None: the reader's bars alone.
    value_fit: ValueFitHead | None = None

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        return await self.inner.judge(sentences)

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
    ) -> list[FieldStatement]:
        """The reader's answers; a held field's under the held floor kept where the pair head
        reads a change of the held words (ADR 0137, when `held` maps fields to them); the
        others' judged by the value-fit head when there is one (ADR 0211); with the heads'
        agreement (ADR 0122) the held fields are read at the reader's own floor and no
        value-fit head reads: the lower bars were not measured together."""
        if self.agreement_floor is None:
            head = self.value_fit
            reach = 0.0 if head is None else head.reach
            lower = [] if head is None else reaching(fields, held)
            if self.held_change is not None and isinstance(held, Mapping) and held:
                found = await changed_statements(
                    self.reader, self.held_change, transcript, fields, lists, held, reach, lower
                )
            else:
                found = await self.reader.field_statements(
                    transcript, fields, lists, held=held, reach=reach, reaching=lower
                )
            if head is None:
                return found
            return await fitted(self.reader, head, transcript, found, fields, lists, held)
        return await agreed_statements(
            self.reader, self.inner, transcript, fields, lists, self.agreement_floor
        )

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]:
        return await self.inner.similarities(sentence, texts)

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        return await self.inner.answers(pairs)
