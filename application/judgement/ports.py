"""Ports of this use case: the roles it needs, as Protocols; adapters implement them.

Each port's docstring states the contract its shared test suite checks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from factledger.application.judgement.types import FieldStatement, Judgement, Reply
from factledger.domain.transcript import Message


class SentenceJudge(Protocol):
    """Judges what sentences say, by a learned model rather than word lists.

    - `judge` returns one `Judgement` per sentence, in order: whom it is about, hedged or
      not, a request to forget or not, a correction or change of something said before.
    - `answers` classifies each (question, reply) pair as a yes, a no or neither, in the
      language the reply was said; a reply that confirms something other than what was
      asked, or corrects its value, is not a yes.
    - `field_statements` finds the clauses of the subject's messages that state one of
      `fields` (any schema's field names), each with its probability; only the subject's
      lines are read, the agent's question before a line only helps to read it. `lists`
      names the list fields among `fields`: a reader may hold their statements to a bar of
      their own (each of them is proposed, not only the best); `held` names the fields the
      subject holds a statement of already, which a reader may read at a bar of its own
      (a new statement there is an expected update, ADR 0128); when `held` is a mapping,
      each field's value is the words the subject holds ("" when not known), for a reader
      that compares a line with them (ADR 0137).
    - `similarities` says how close in meaning each of `texts` is to `sentence`: one cosine
      similarity (-1 to 1) per text, in order, in the judge's own embedding space. A request
      to forget states no value, so no field clears `field_statements`' bar: the words held
      of each field are compared with it instead (`application.review.forget_requests`,
      whose bars were fitted on the shipped embedder's scale).
    - Deterministic for a given model and input; no network, no I/O beyond its loaded model.
    """

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]: ...

    async def field_statements(
        self,
        transcript: Sequence[Message],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
    ) -> list[FieldStatement]: ...

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]: ...

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]: ...


class SentenceCloseness(Protocol):
    """How close each of `texts` is to `sentence`, as one encoder reads them (cosine
    similarities, one per text, in order). `SentenceJudge.similarities` is one such reading;
    a second encoder gives another (ADR 0200). Deterministic for a given model; no network."""

    async def similarities(self, sentence: str, texts: Sequence[str]) -> list[float]: ...


class FieldMentions(Protocol):
    """Whether a sentence speaks of each of `fields` (a subject kind's field names, read
    together: a reader may weigh each field against the others): one answer per field, in
    order. A field reader says so when it reads, in the sentence, words of that field's value
    at a bar of its own, however far under the bar a value is proposed from: a request to
    forget names what it concerns without stating a value ("delete that bit about me being
    allergic to ibuprofen" speaks of `allergies`, not of `home_address`; ADR 0218).
    Deterministic for a given model and input; no network."""

    async def speaks_of(self, sentence: str, fields: Sequence[str]) -> list[bool]: ...


class ReplyReader(Protocol):
    """Reads each (question, reply) pair as a yes, a no or neither to that question (as
    `SentenceJudge.answers` does; a reader of its own may hold a yes to another bar)."""

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]: ...


class ReadBackReader(Protocol):
    """Reads the values the agent's lines say back to the subject (ADR 0138).

    - `read_backs` returns, for each agent line at `indexes`, the words of its last sentence
      (the question the subject's next line answers) that state one of `fields`, each with
      its `p` (only its order is read); `lists` and `held` as for
      `SentenceJudge.field_statements`; `floor`, when given, is every field's bar in place of
      its own. A statement's `message_index` is the agent line's.
    - Reads no subject line: whether the subject confirmed is the caller's to judge.
    - Deterministic for a given model and input; no network.
    """

    async def read_backs(
        self,
        transcript: Sequence[Message],
        indexes: Collection[int],
        fields: Sequence[str],
        lists: Collection[str] = (),
        held: Collection[str] = (),
        floor: float | None = None,
    ) -> list[FieldStatement]: ...
