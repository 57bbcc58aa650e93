"""Statements a later statement of their field replaced: recall no longer offers them as current.

"I'm a senior engineer on the platform team", then a session later "I'm Engineering Manager
now": the model proposes the update, but the first sentence's memory stays current in the
backend (the extractor gave the two memories no common slot), so recall offered the old role
beside, or above, the new one. The ledger knows better: both sentences are the evidence of
proposals of one single-valued field. So recall reads, beside the subject's forgets, the
statements of each such field that a later one replaced, and drops their memories:

- a field's statements are its stated `set` proposals that still stand (not rejected, not
  withdrawn by a forget), pending, confirmed or superseded alike, ordered by when they were
  said; the latest one is the field's current statement;
- an earlier statement is replaced when its value differs from the current one by meaning
  (`memory.sameness`; the same amounts said more or less firmly are one value here);
- a memory is a replaced statement's when it comes from the statement's session and message
  and its words are the sentence's (the extractor rewords little: "I'm" becomes "is"), and it
  does not state the current value ("moved from A to B" stays). When the sentence is also the
  evidence of another field's standing value ("two bedrooms, budget 480 thousand"), only a
  memory that holds the replaced value's words goes: a memory of the sentence's other part
  stays for that field.

Two more kinds of statement leave recall the same way (ADR 0123):

- a statement whose field the subject asked to forget, while the request is pending: what
  they said of the field before the request and nobody confirmed is withheld (a confirmed
  value stays what was decided until the request is); rejecting the request brings it back,
  approving it forgets it for good;
- a replaced statement's sentence is all the replaced statements of its message together
  ("could start 1 Nov at the earliest. notice is 4 weeks" states two fields, each replaced
  by a later statement; its memory is both sentences' words).

And an extension's sentence for the items a later removal takes off (ADR 0159): a memory of
it that holds a removed item's words and states none of the items still held leaves recall
while the removal is pending or once it is confirmed.

And a rejected proposal's own sentence (ADR 0142): the sync's `reject` item forgets the
memories that state the rejected value and are about the field (ADR 0057), but a memory of
the sentence slotted elsewhere ("thinks their excess was 150? or maybe that was the old
policy", the rejected `deductible` said in it) stayed current, and recall offered what a
reviewer had rejected. A memory of the rejected statement's message that holds the keywords
of its quote (most of them, lemmas against lemmas: the memory may say more than the quote)
leaves recall; a memory of another sentence stating the same value is the sync's to judge.

Read from the ledger on every recall, as the forgets are, so it is exact at once and
reversible: rejecting the update makes the earlier statement current again, and its memory
comes back. The backend keeps every memory; nothing is forgotten by this rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from factledger.application.memory.lexical import keywords
from factledger.application.memory.record_ids import transcript_document_id
from factledger.application.memory.sameness import any_states, same_value, tokens, value_phrases
from factledger.application.memory.types import SearchHit
from factledger.application.proposals.plan import evidence_said
from factledger.domain.proposal import ChangeRecord, item_key
from factledger.domain.provenance import REQUESTS_TO_FORGET, ChangeStatus, Operation
from factledger.domain.subject import Subject
from factledger.domain.values import ListValue, to_payload

# Share of a memory's words that must be its sentence's for the memory to be that sentence
# (the rest is the extractor's rewording: "I'm" -> "is", "my" -> "their").
SAME_SENTENCE = 0.6
_GONE = (ChangeStatus.REJECTED, ChangeStatus.FORGOTTEN)
# A removal that takes its items off recall: one not yet decided, or confirmed.
_DECIDING = (ChangeStatus.PENDING, ChangeStatus.CONFIRMED)


@dataclass(frozen=True, slots=True)
class ReplacedStatement:
    """An earlier statement of a field, as recall recognises its memories."""

    field: str
    document_id: str  # the transcript document of the session that said it
    message_index: int
    sentence: frozenset[str]  # the sentence's tokens (`sameness.tokens`)
    current: tuple[str, ...]  # the wordings of the field's current value
    # The replaced value's tokens, when the sentence also states another field's standing
    # value: then only a memory that holds the replaced value goes.
    shared_value: frozenset[str] | None = None
    # The replaced value's wordings and the session that said it (`recall.asked` reads them:
    # the same words read as another field's pending value are replaced too).
    value: tuple[str, ...] = ()
    session_id: str = ""
    # A rejected statement's quote, by its keywords (`memory.lexical.keywords`); empty for
    # any other statement.
    rejected_quote: frozenset[str] = frozenset()

    def retires(self, hit: SearchHit) -> bool:
        if not hit.is_latest or hit.document_id != self.document_id:
            return False
        if hit.source_indexes and self.message_index not in hit.source_indexes:
            return False
        words = set(tokens(hit.text))
        if not words or not self._said_here(hit.text, words):
            return False
        value = self.shared_value
        if value is not None and len(words & value) < SAME_SENTENCE * len(value):
            return False
        return not any_states(hit.text, self.current)

    def _said_here(self, text: str, words: set[str]) -> bool:
        """Whether a memory of the statement's message is its sentence's."""
        if self.rejected_quote:
            # The memory may say more than the quote ("or maybe that was the old policy"):
            # it is the quote's when it holds the quote's keywords, lemmas against lemmas.
            held = self.rejected_quote & set(keywords(text))
            return len(held) >= SAME_SENTENCE * len(self.rejected_quote)
        return len(words & self.sentence) >= SAME_SENTENCE * len(words)


def _standing(record: ChangeRecord) -> bool:
    return record.status not in _GONE and record.proposal.value is not None


def _statements(subject: Subject) -> dict[str, list[ChangeRecord]]:
    """Each field's stated `set` proposals that stand, oldest said first."""
    by_field: dict[str, list[ChangeRecord]] = {}
    for record in subject.changes.values():
        proposal = record.proposal
        if proposal.operation is Operation.SET and proposal.evidence and _standing(record):
            by_field.setdefault(proposal.field, []).append(record)
    for records in by_field.values():
        records.sort(key=lambda r: (evidence_said(subject, r), r.proposed_version))
    return by_field


def _same(earlier: str, current: str) -> bool:
    """Whether an earlier wording says the current value: the same by meaning, or the same
    amounts said more or less firmly ("we might go to 440", then "440 is good now")."""
    if same_value(earlier, current):
        return True
    amounts = {t for t in tokens(earlier) if t.startswith("#")}
    return bool(amounts) and amounts == {t for t in tokens(current) if t.startswith("#")}


def may_replace(subject: Subject) -> bool:
    """Cheap first check: some field has two stated `set` proposals, a pending request to
    forget, a removal pending or confirmed, or a rejected proposal."""
    seen: set[str] = set()
    for record in subject.changes.values():
        proposal = record.proposal
        if record.status is ChangeStatus.REJECTED:
            return True
        if proposal.operation in REQUESTS_TO_FORGET and record.status is ChangeStatus.PENDING:
            return True
        if proposal.operation is Operation.REMOVE and record.status in _DECIDING:
            return True
        if proposal.operation is Operation.SET and proposal.evidence is not None:
            if proposal.field in seen:
                return True
            seen.add(proposal.field)
    return False


def _phrases(record: ChangeRecord) -> list[str]:
    value = record.proposal.value
    return [] if value is None else value_phrases(to_payload(value))


def _value_tokens(record: ChangeRecord) -> frozenset[str]:
    return frozenset(t for p in _phrases(record) for t in tokens(p))


def _where(record: ChangeRecord) -> tuple[str, int, str] | None:
    evidence = record.proposal.evidence
    if evidence is None:
        return None
    return evidence.session_id, evidence.message_index, evidence.quote


def _forget_requested(subject: Subject) -> dict[str, datetime]:
    """The fields with a pending request to forget, and when the (latest) request was said."""
    asked: dict[str, datetime] = {}
    for record in subject.changes.values():
        if record.proposal.operation is Operation.FORGET and record.status is ChangeStatus.PENDING:
            when = evidence_said(subject, record)
            asked[record.proposal.field] = max(when, asked.get(record.proposal.field, when))
    return asked


def _withheld(subject: Subject) -> list[tuple[str, ChangeRecord, list[str]]]:
    """(field, record, the field's current wordings) of every statement recall withholds:
    rejected ones, those of a field the subject asked to forget, said before the request
    (nothing of them is current), and those a later statement of their field replaced."""
    by_field = _statements(subject)
    requested = _forget_requested(subject)
    withheld: list[tuple[str, ChangeRecord, list[str]]] = _rejected(subject)
    for field, stated in by_field.items():
        asked = requested.get(field)
        records = stated
        if asked is not None:
            withheld += [(field, r, []) for r in stated if _before(subject, r, asked)]
            records = [r for r in stated if not _before(subject, r, asked)]
        current = _phrases(records[-1]) if records else []
        if not current:
            continue
        withheld += [
            (field, r, current)
            for r in records[:-1]
            if not any(_same(p, c) for p in _phrases(r) for c in current)
        ]
    return withheld


def _rejected(subject: Subject) -> list[tuple[str, ChangeRecord, list[str]]]:
    """The rejected stated values, each withheld with nothing current."""
    return [
        (record.proposal.field, record, [])
        for record in subject.changes.values()
        if record.status is ChangeStatus.REJECTED
        # A request to forget names what would go, never something said to be so (ADR 0160).
        and record.proposal.operation not in REQUESTS_TO_FORGET
        and record.proposal.value is not None
        and record.proposal.evidence is not None
    ]


def _before(subject: Subject, record: ChangeRecord, asked: datetime) -> bool:
    """An undecided statement said before the request (one said with it may be what the
    request keeps, "it's 750k, not 720k, and please remove ..."); a confirmed value stays
    what was decided until the request is."""
    return record.status is not ChangeStatus.CONFIRMED and evidence_said(subject, record) < asked


def replaced_statements(subject: Subject) -> tuple[ReplacedStatement, ...]:
    """The subject's replaced statements (see the module docstring)."""
    replaced = _withheld(subject)
    if not replaced:
        return _removed_items(subject)
    standing = _standing_sentences(subject, {id(r) for _, r, _ in replaced})
    # A message's replaced sentences together: one memory may hold several of them.
    said: dict[tuple[str, int], set[str]] = {}
    for _, record, _ in replaced:
        if (where := _where(record)) is not None:
            said.setdefault(where[:2], set()).update(tokens(where[2]))
    found: list[ReplacedStatement] = []
    for field, record, current in replaced:
        where = _where(record)
        if where is None:
            continue
        session_id, index, _ = where
        found.append(
            ReplacedStatement(
                field,
                transcript_document_id(subject.id, session_id),
                index,
                frozenset(said[session_id, index]),
                tuple(current),
                _value_tokens(record) if where in standing else None,
                tuple(_phrases(record)),
                session_id,
                frozenset(keywords(where[2]))
                if record.status is ChangeStatus.REJECTED
                else frozenset(),
            )
        )
    return tuple(found) + _removed_items(subject)


def _removed_items(subject: Subject) -> tuple[ReplacedStatement, ...]:
    """The list items a pending or confirmed removal takes off, as an extension said before
    it stated them (ADR 0159): a memory of that sentence that holds a removed item's words
    leaves recall, unless it states an item the extension still holds ("takes metformin and
    aspirin" stays while the metformin does; "a baby aspirin every morning" goes)."""
    found: list[ReplacedStatement] = []
    for removal in subject.changes.values():
        removed = removal.proposal.value
        if removal.operation is not Operation.REMOVE or not isinstance(removed, ListValue):
            continue
        if removal.status not in _DECIDING:
            continue
        gone = {item_key(i) for i in removed.items}
        when = evidence_said(subject, removal)
        for record in subject.changes.values():
            items = record.proposal.value
            where = _where(record)
            if record.field != removal.field or record.operation is not Operation.APPEND:
                continue
            if not isinstance(items, ListValue) or where is None or not _standing(record):
                continue
            taken = [i for i in items.items if item_key(i) in gone]
            if not taken or evidence_said(subject, record) >= when:
                continue
            session_id, index, quote = where
            found.append(
                ReplacedStatement(
                    record.field,
                    transcript_document_id(subject.id, session_id),
                    index,
                    frozenset(tokens(quote)),
                    tuple(i for i in items.items if item_key(i) not in gone),
                    frozenset(t for i in taken for t in tokens(i)),
                    tuple(taken),
                    session_id,
                )
            )
    return tuple(found)


def _standing_sentences(subject: Subject, replaced: Iterable[int]) -> set[tuple[str, int, str]]:
    """The sentences that state a value still standing: the evidence of every standing
    proposal not itself replaced."""
    gone = set(replaced)
    return {
        where
        for record in subject.changes.values()
        if id(record) not in gone and _standing(record) and (where := _where(record)) is not None
    }


def without_replaced(
    hits: Sequence[SearchHit], replaced: Sequence[ReplacedStatement]
) -> list[SearchHit]:
    if not replaced:
        return list(hits)
    return [h for h in hits if not any(r.retires(h) for r in replaced)]
