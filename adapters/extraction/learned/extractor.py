"""`LearnedExtractor`: facts the rules find, judged sentence by sentence by a learned model.

The rules propose candidate facts with their slots and values; a `SentenceJudge` (small heads
over the packaged sentence embedder) reads the subject's sentence each fact stands
on and drops the fact when that sentence is not a statement about the subject themself: a
third party's fact, small talk, a question, or a request to forget (whose words must never
become a memory). Word lists decide less; the judgement generalises to wordings nobody wrote
a rule for, and is refitted from labelled data (`bench/judgement`).

A fact read in a tentative sentence ("So, realistically, I'd need 135 now to move.") keeps
the sentence's hedge as its condition: the ledger refuses a stated change that quotes a
tentative sentence without one (`domain.hedges`), so the fact would otherwise propose nothing,
and an update said that way was lost. The judge reads the sentence the change will quote with
the hedge head the ledger's own reader uses, at the same bar.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from factledger.adapters.extraction.learned.stance_screen import screened
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.judgement.stance import AnswerStanceReader
from factledger.application.judgement.types import FieldStatement, Judgement, Statement
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.ports import Extractor
from factledger.application.memory.types import RelationKind
from factledger.application.proposals.candidates import whole_sentence
from factledger.application.proposals.schema import is_slot_of
from factledger.domain.hedges import sentences_around
from factledger.domain.proposal import MAX_CONDITION
from factledger.domain.transcript import Message, Role

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+")
NOT_ABOUT_SUBJECT_MIN = 0.6  # how sure the judge must be that a sentence is not about them


def sentences_of(text: str) -> list[str]:
    return [p.strip() for p in _SENTENCE_END.split(text) if p.strip()] or [text]


def _standing_sentence(fact: ExtractedFact, sentences: Sequence[str]) -> int:
    """The index of the sentence the fact stands on: the one holding its value, else the
    one sharing most words with its note."""
    if fact.value:
        needle = fact.value.lower()
        for i, sentence in enumerate(sentences):
            if needle in sentence.lower():
                return i
    words = set(_WORD.findall(fact.text.lower()))
    overlap = [len(words & set(_WORD.findall(s.lower()))) for s in sentences]
    return max(range(len(sentences)), key=overlap.__getitem__)


def _keeps(judgement: Judgement) -> bool:
    if judgement.forget_request:
        return False
    if judgement.statement is Statement.SELF:
        return True
    return judgement.statement_p < NOT_ABOUT_SUBJECT_MIN


@dataclass(frozen=True, slots=True)
class LearnedExtractor:
    rules: Extractor
    judge: SentenceJudge
    # Ask the judge every field of the request, not only those the rules fed nothing: the QA
    # reader was trained asked every field of a line at once, the fields competing for its
    # words, so a value the rules found still takes its words from the other fields.
    asks_every_field: bool = False
    # Reads whether the sentence each of the judge's field answers stands on states that
    # field's value (ADR 0121); None: every answer over the reader's floor is kept.
    stance: AnswerStanceReader | None = None
    # A single-valued field the subject holds a statement of: the session's latest-said answer
    # over the floor, not its most probable (ADR 0128: where a held field is said again, the
    # update is what the subject ends on); False: the most probable, as for any field.
    latest_of_held: bool = False

    VERSION = 1

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        ruled = await self.rules.extract(request)
        if not ruled and not request.fields:
            return ruled
        facts = _without(ruled, await self._not_kept(request.transcript, ruled))
        if not request.fields:
            return facts
        read = facts + await self._by_meaning(request, facts)
        slots = {f.slot for f in request.fields}
        return await self._keeping_hedges(request.transcript, read, slots)

    async def _not_kept(
        self, transcript: Sequence[Message], facts: Sequence[ExtractedFact]
    ) -> set[str]:
        """The keys of the facts whose sentence the judge reads as no statement of the
        subject's own; only the sentences facts stand on are judged, in one call."""
        said = {i: sentences_of(m.text) for i, m in enumerate(transcript) if m.role is Role.SUBJECT}
        standing = {f.key: at for f in facts if (at := _standing(f, said)) is not None}
        order = sorted(set(standing.values()))
        if not order:
            return set()
        judged = await self.judge.judge([said[i][n] for i, n in order])
        verdict = dict(zip(order, judged, strict=True))
        return {key for key, at in standing.items() if not _keeps(verdict[at])}

    async def _keeping_hedges(
        self, transcript: Sequence[Message], facts: Sequence[ExtractedFact], slots: set[str]
    ) -> list[ExtractedFact]:
        """The facts, each of a field's slot said in a tentative sentence carrying that
        sentence's hedge as its condition: the words of the sentence around the value (else
        the whole sentence)."""
        quoted = [
            (n, sentence)
            for n, f in enumerate(facts)
            if f.slot in slots and (sentence := _quoted(f, transcript))
        ]
        if not quoted:
            return list(facts)
        judged = await self.judge.judge([sentence for _, sentence in quoted])
        kept = list(facts)
        for (n, sentence), judgement in zip(quoted, judged, strict=True):
            if judgement.hedged:
                kept[n] = replace(facts[n], condition=_hedge_of(sentence, facts[n].value or ""))
        return kept

    async def _by_meaning(
        self, request: ExtractionRequest, ruled: Sequence[ExtractedFact]
    ) -> list[ExtractedFact]:
        """Facts for the fields the rules fed nothing, from the clauses the judge reads as
        stating them: the most probable clause of a single field, every one of a list's (the
        session's latest line stating a single field, in place of its best, was measured and
        not kept: ADR 0113).

        An answer said tentatively keeps its hedge as every fact does (`_keeping_hedges`).
        Unlike the rules' facts, an answer is not dropped by the heads' reading of its
        sentence (someone else's, small talk, a question, a request to forget): on the dev
        halves that lost more right values than wrong ones (ADR 0113)."""
        fed = {f.slot for f in ruled if f.slot is not None and not f.negated}
        wanted = [f for f in request.fields if f.slot not in fed]
        if not wanted:
            return []
        asked = request.fields if self.asks_every_field else wanted
        lists = [f.field for f in asked if f.many]
        # A held field the rules' facts feed (a keyed slot, "intent:...", included) keeps the
        # reader's own floor: the lower bar is for a field nothing else read, and an answer
        # read under the floor there competed with the rules' fact and lost its condition.
        # Each held field with the words it holds ("" when not known): a judge may compare a
        # line with them (ADR 0137); any other reads only which fields are held.
        held = {
            f.field: f.held_value or ""
            for f in asked
            if f.held and not f.many and not _fed(f.slot, ruled)
        }
        found = await self.judge.field_statements(
            request.transcript, [f.field for f in asked], lists, held
        )
        hedged: set[FieldStatement] = set()
        if self.stance is not None:
            found, hedged = await screened(
                self.stance, request.transcript, found, lists, {f.field for f in wanted}
            )
        facts: list[ExtractedFact] = []
        for spec in wanted:
            stated = sorted(
                (s for s in found if s.field == spec.field), key=lambda s: s.p, reverse=True
            )
            if spec.many:
                chosen = stated
            elif spec.held and self.latest_of_held and stated:
                chosen = [max(stated, key=lambda s: _said_at(s, request.transcript))]
            else:
                chosen = stated[:1]
            for s in sorted(chosen, key=lambda s: s.message_index):
                line = request.transcript[s.message_index].text
                facts.append(
                    ExtractedFact(
                        key=f"m{len(facts)}",
                        text=s.clause,
                        slot=spec.slot,
                        source_indexes=(s.message_index,),
                        value=s.clause,
                        condition=_hedge_of(whole_sentence(line, containing=(s.clause,)), s.clause)
                        if s in hedged
                        else None,
                    )
                )
        return facts


def _fed(slot: str, facts: Sequence[ExtractedFact]) -> bool:
    """Whether a stated fact has `slot` or a keyed slot of it (`slot:key`)."""
    return any(f.slot is not None and not f.negated and is_slot_of(f.slot, slot) for f in facts)


def _said_at(statement: FieldStatement, transcript: Sequence[Message]) -> tuple[int, int]:
    """Where an answer was said: its line, then where its words start in the line."""
    line = transcript[statement.message_index].text
    return statement.message_index, line.find(statement.clause)


def _standing(fact: ExtractedFact, said: dict[int, list[str]]) -> tuple[int, int] | None:
    """Where a stated fact stands: its last cited subject's line and the sentence of it."""
    cited = [i for i in fact.source_indexes if i in said]
    if not cited or fact.is_inference:
        return None
    index = cited[-1]
    return index, _standing_sentence(fact, said[index])


def _quoted(fact: ExtractedFact, transcript: Sequence[Message]) -> str:
    """The sentence a stated change of the fact would quote, as the ledger reads it around
    the quote; empty for a fact that carries its condition or quotes no subject's line."""
    if fact.condition or fact.negated or fact.is_inference or not fact.value:
        return ""
    said = [
        i
        for i in fact.source_indexes
        if 0 <= i < len(transcript) and transcript[i].role is Role.SUBJECT
    ]
    if not said:
        return ""
    text = transcript[said[-1]].text
    return sentences_around(text, whole_sentence(text, containing=(fact.value,)))


def _hedge_of(sentence: str, value: str) -> str:
    rest = sentence.replace(value, " ", 1) if value else sentence
    said = rest if _WORD.search(rest) else sentence
    return " ".join(said.split()).strip(" ,;:.!?")[:MAX_CONDITION] or sentence[:MAX_CONDITION]


def _without(facts: Sequence[ExtractedFact], dropped: set[str]) -> list[ExtractedFact]:
    """The facts not dropped, none naming a dropped one; an inference that rested only on
    dropped facts goes with them."""
    kept = []
    for fact in facts:
        if fact.key in dropped:
            continue
        related = tuple(r for r in fact.related_to if r not in dropped)
        if fact.related_to and not related and fact.relation is RelationKind.DERIVES:
            continue
        kept.append(fact if related == fact.related_to else replace(fact, related_to=related))
    return kept
