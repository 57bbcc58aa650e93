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

A value the agent says back ("So you're on Premium now?") is proposed where the subject's next
line opens with a yes to it and the subject's own lines state nothing for that field (ADR
0138): the QA reader reads the agent line's last sentence, the answer judge the reply's first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from factledger.adapters.extraction.learned.stance_screen import screened
from factledger.application.judgement.ports import ReadBackReader, ReplyReader, SentenceJudge
from factledger.application.judgement.stance import AnswerStanceReader
from factledger.application.judgement.types import FieldStatement, Judgement, Reply, Statement
from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionRequest,
    FieldSlot,
)
from factledger.application.memory.lexical import keywords
from factledger.application.memory.ports import Extractor
from factledger.application.memory.types import RelationKind
from factledger.application.proposals.candidates import whole_sentence
from factledger.application.proposals.schema import is_slot_of
from factledger.application.sentences import sentences as split_sentences
from factledger.domain.hedges import sentences_around
from factledger.domain.proposal import MAX_CONDITION
from factledger.domain.transcript import Message, Role

_WORD = re.compile(r"\w+")
_CLOSING = "?!.,;: "
NOT_ABOUT_SUBJECT_MIN = 0.6  # how sure the judge must be that a sentence is not about them


def sentences_of(text: str) -> list[str]:
    return split_sentences(text) or [text]


def subject_sentences(transcript: Sequence[Message]) -> dict[int, list[str]]:
    """The sentences of each of the subject's lines, by the line's index."""
    return {i: sentences_of(m.text) for i, m in enumerate(transcript) if m.role is Role.SUBJECT}


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
    # Reads the values the agent's lines say back, proposed where the subject's next line is a
    # yes to them and no line of the subject's states the field (ADR 0138); None: never.
    read_backs: ReadBackReader | None = None
    # Who reads the subject's reply to a read-back as a yes; None: the judge, as it reads a
    # confirmation of a pending change.
    read_back_replies: ReplyReader | None = None
    # The reader's bar for a value the subject confirmed; None: each field's own floor.
    read_back_floor: float | None = None
    # Reads the value an agent's question says back, so that a subject's answer that is only
    # a yes to it ("That's right." to "Your address is still 14 Orchard Lane?") is no value
    # of that field (ADR 0221); None: such an answer is kept.
    said_back: ReadBackReader | None = None

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
        said = subject_sentences(transcript)
        stood_on = {f.key: at for f in facts if (at := standing(f, said)) is not None}
        order = sorted(set(stood_on.values()))
        if not order:
            return set()
        judged = await self.judge.judge([said[i][n] for i, n in order])
        verdict = dict(zip(order, judged, strict=True))
        return {key for key, at in stood_on.items() if not _keeps(verdict[at])}

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
        if self.said_back is not None:
            found = await self._not_bare_yeses(request.transcript, found, lists, list(held))
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
        if self.read_backs is None:
            return facts
        read = {s.field for s in found}
        unstated = [f for f in wanted if f.field not in read]
        return facts + await self._confirmed(request, unstated, lists, list(held))

    async def _not_bare_yeses(
        self,
        transcript: Sequence[Message],
        found: Sequence[FieldStatement],
        lists: Sequence[str],
        held: Sequence[str],
    ) -> list[FieldStatement]:
        """`found` less the answers that are only a yes to a value the agent's line before
        says back for their field: an answer sharing no keyword with the agent's question,
        whose field the reader reads in that question, and that the reply reader reads as a
        yes to it. The yes confirms the agent's words (ADR 0138's read-back, when on), it
        states no value of its own."""
        assert self.said_back is not None  # noqa: S101 - only called with a reader
        doubtful = [
            (n, s, question)
            for n, s in enumerate(found)
            if s.message_index > 0
            and _asks_the_subject(transcript, s.message_index - 1)
            and (question := sentences_of(transcript[s.message_index - 1].text)[-1])
            and not set(keywords(s.clause)) & set(keywords(question))
        ]
        if not doubtful:
            return list(found)
        fields = sorted({s.field for _, s, _ in doubtful})
        said_back = await self.said_back.read_backs(
            transcript,
            sorted({s.message_index - 1 for _, s, _ in doubtful}),
            fields,
            [f for f in lists if f in fields],
            [f for f in held if f in fields],
        )
        back = {(b.message_index, b.field) for b in said_back}
        asked = [(n, s, q) for n, s, q in doubtful if (s.message_index - 1, s.field) in back]
        if not asked:
            return list(found)
        replies = await (self.read_back_replies or self.judge).answers(
            [(question, s.clause) for _, s, question in asked]
        )
        dropped = {n for (n, _, _), r in zip(asked, replies, strict=True) if r is Reply.YES}
        return [s for n, s in enumerate(found) if n not in dropped]

    async def _confirmed(
        self,
        request: ExtractionRequest,
        unstated: Sequence[FieldSlot],
        lists: Sequence[str],
        held: Sequence[str],
    ) -> list[ExtractedFact]:
        """Facts for `unstated` fields from the values the agent's lines say back, where the
        subject's next line opens with a yes to that line (ADR 0138): the agent's words and
        the subject's yes are both the evidence, and only the subject's words confirm. The
        yes is read in the reply's first sentence: what follows it is the subject's own
        statement, read as every line of theirs is. A single field takes its most probable
        confirmed value, a list field every one."""
        if self.read_backs is None or not unstated:
            return []
        transcript = request.transcript
        asked = [i for i in range(len(transcript) - 1) if _asks_the_subject(transcript, i)]
        if not asked:
            return []
        pairs = [(transcript[i].text, sentences_of(transcript[i + 1].text)[0]) for i in asked]
        replies = await (self.read_back_replies or self.judge).answers(pairs)
        confirmed = [i for i, reply in zip(asked, replies, strict=True) if reply is Reply.YES]
        if not confirmed:
            return []
        names = [f.field for f in unstated]
        read = await self.read_backs.read_backs(
            transcript,
            confirmed,
            names,
            [f for f in lists if f in names],
            [f for f in held if f in names],
            self.read_back_floor,
        )
        facts: list[ExtractedFact] = []
        for spec in unstated:
            said = sorted((s for s in read if s.field == spec.field), key=lambda s: -s.p)
            for s in sorted(said if spec.many else said[:1], key=lambda s: s.message_index):
                # A question's span may end on its question mark: the value is the words.
                value = s.clause.rstrip(_CLOSING) or s.clause
                at = s.message_index
                facts.append(
                    ExtractedFact(
                        key=f"r{len(facts)}",
                        text=value,
                        slot=spec.slot,
                        source_indexes=(at, at + 1),
                        value=value,
                        read_back=at,
                    )
                )
        return facts


def _asks_the_subject(transcript: Sequence[Message], index: int) -> bool:
    """Whether line `index` is someone else's, answered by the subject's next line."""
    line, reply = transcript[index], transcript[index + 1]
    return (
        line.role is not Role.SUBJECT
        and bool(line.text.strip())
        and reply.role is Role.SUBJECT
        and bool(reply.text.strip())
    )


def _fed(slot: str, facts: Sequence[ExtractedFact]) -> bool:
    """Whether a stated fact has `slot` or a keyed slot of it (`slot:key`)."""
    return any(f.slot is not None and not f.negated and is_slot_of(f.slot, slot) for f in facts)


def _said_at(statement: FieldStatement, transcript: Sequence[Message]) -> tuple[int, int]:
    """Where an answer was said: its line, then where its words start in the line."""
    line = transcript[statement.message_index].text
    return statement.message_index, line.find(statement.clause)


def standing(fact: ExtractedFact, said: dict[int, list[str]]) -> tuple[int, int] | None:
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
