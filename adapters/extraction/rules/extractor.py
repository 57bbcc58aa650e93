"""`RuleExtractor`: deterministic, offline fact extraction driven by configurable guidance.

- Only the subject's own messages are read for facts; agent, staff and system lines are used
  only as the question a short reply answers ("Would you upgrade?" / "Maybe next quarter").
- A sentence yields the slot facts its guidance patterns find; a sentence no pattern fits but
  that says something still becomes a fact close to the subject's words, with its provenance.
- Hedged or conditional statements are intents with the hedge or condition kept verbatim,
  never state changes; changes of state update their slot; reasons extend what they explain;
  configured derivation rules add inferred conclusions.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

import structlog

from factledger.adapters.extraction.rules.clauses import (
    Clauses,
    is_filler,
    split_clauses,
    without_interjection,
)
from factledger.adapters.extraction.rules.dates import (
    DateMention,
    annotate,
    find_dates,
    strip_dates,
)
from factledger.adapters.extraction.rules.guidance import (
    Guidance,
    SlotPattern,
    SlotSpec,
    load_guidance,
)
from factledger.adapters.extraction.rules.links import Draft, derive, update_targets
from factledger.adapters.extraction.rules.notes import is_fragment, with_partner, without_filler
from factledger.adapters.extraction.rules.reasons import (
    answer_as_reason,
    asks_why,
    explained_by_later_reason,
    is_pointer,
    previous_value,
    reason_draft,
    reason_note,
    reason_words,
)
from factledger.adapters.extraction.rules.replies import reply_intent
from factledger.adapters.extraction.rules.tenses import simple_present
from factledger.adapters.extraction.rules.text import (
    carry_speaker,
    clean,
    expand_contractions,
    sentences,
    third_person,
    value_key,
    with_topic,
    word_count,
)
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest, KnownFact
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

log = structlog.get_logger()

MIN_STATEMENT_WORDS = 3
_INLINE_MESSAGES = 20
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|we|we're|us|our)\b", re.I)
_CONJUNCTIONS = re.compile(
    r"^(?:and|but|so|also|or|then)\b|\b(?:and|but|so|or)(?: then)?$", re.IGNORECASE
)
# "You are doing great" is about the listener; "Your pricing is higher" may be a complaint.
_LISTENER_SUBJECT = re.compile(r"^(?:you|you're|you've|you'll|you'd)\b", re.IGNORECASE)


@dataclass(slots=True)
class _Run:
    """The state of one extraction: drafts so far and what they are linked against."""

    known: Sequence[KnownFact]
    drafts: list[Draft] = field(default_factory=list)

    def add(self, draft: Draft) -> Draft:
        twin = next((d for d in self.drafts if d.text.lower() == draft.text.lower()), None)
        if twin is not None:  # the same note said twice: one fact, both sources
            twin.sources = sorted(set(twin.sources) | set(draft.sources))
            return twin
        draft.key = f"f{len(self.drafts)}"
        self.drafts.append(draft)
        return draft


@dataclass(frozen=True, slots=True)
class _SlotMatch:
    spec: SlotSpec
    pattern: SlotPattern
    start: int
    end: int
    value: str


def _is_statement(text: str) -> bool:
    """Says something about the subject: enough words, and not only about the listener."""
    core = without_interjection(text)
    if word_count(core) < MIN_STATEMENT_WORDS:
        return False
    return not (_LISTENER_SUBJECT.match(core) and not _FIRST_PERSON.search(core))


def _date_last(text: str, anchor: datetime) -> str:
    """Annotates relative dates, moving a leading one to the end so the statement opens with
    its verb ("Last week I went" -> "went ... last week (week of ...)")."""
    dates = find_dates(text, anchor)
    if dates and dates[0].start == 0:
        first, rest = dates[0], text[dates[0].end :].lstrip(" ,")
        moved = [replace(d, start=d.start - first.end, end=d.end - first.end) for d in dates[1:]]
        shift = len(text[first.end :]) - len(rest)
        moved = [replace(d, start=d.start - shift, end=d.end - shift) for d in moved]
        words = first.annotated[0].lower() + first.annotated[1:]
        return f"{annotate(rest, moved).rstrip(' .!')} {words}"
    return annotate(text, dates)


def _past_day(dates: list[DateMention], anchor: datetime) -> datetime | None:
    """The first resolved date that is not in the future, as the start of that day."""
    past = [d.day for d in dates if d.day <= anchor.date()]
    return datetime.combine(past[0], datetime.min.time(), anchor.tzinfo) if past else None


def _uncovered(text: str, matches: list[_SlotMatch]) -> list[str]:
    """Clauses of `text` outside every slot match that still say something of the subject
    ("We're a clinic" in "We're a clinic with 25 staff")."""
    edges = [0, *(e for m in matches for e in (m.start, m.end)), len(text)]
    gaps = [text[edges[i] : edges[i + 1]] for i in range(0, len(edges), 2)]
    rests = [_CONJUNCTIONS.sub("", g.strip(" ,;")).strip(" ,;") for g in gaps]
    return [r for r in rests if _FIRST_PERSON.search(r) and _is_statement(r)]


class RuleExtractor:
    """Deterministic extractor; the default of every self-hosted backend."""

    VERSION = "1"  # bumped when the same guidance would extract differently

    def __init__(self, guidance: Guidance | None = None) -> None:
        self.guidance = guidance if guidance is not None else load_guidance()

    @classmethod
    def from_guidance_file(cls, path: Path | None = None) -> RuleExtractor:
        """An extractor for a user's guidance file (None: the packaged guidance)."""
        return cls(load_guidance(path))

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        # Pure CPU work that grows with the transcript: a long one goes to a thread so the event
        # loop keeps serving recalls meanwhile.
        if len(request.transcript) > _INLINE_MESSAGES:
            return await asyncio.to_thread(self.extract_now, request)
        return self.extract_now(request)

    def extract_now(self, request: ExtractionRequest) -> list[ExtractedFact]:
        """The same as `extract`, for synchronous callers (it does no I/O)."""
        started = time.perf_counter()
        run = _Run(known=request.known)
        for index, message in enumerate(request.transcript):
            if message.role is Role.SUBJECT:
                anchor = message.at or request.occurred_at
                previous = request.transcript[index - 1] if index > 0 else None
                self._read_message(run, index, message, anchor, previous)
        for derived in derive(self.guidance.derivations, run.drafts, run.known, key="d"):
            run.add(derived)
        facts = [d.freeze() for d in run.drafts]
        log.debug(
            "extraction.completed",
            extractor="rule",
            messages=len(request.transcript),
            facts=len(facts),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        return facts

    def _read_message(
        self, run: _Run, index: int, message: Message, anchor: datetime, previous: Message | None
    ) -> None:
        # The first statement after an agent's "why?" answers it, when there is a change.
        answers_why = asks_why(previous) and explained_by_later_reason(run.drafts) is not None
        asked = ""  # "Kingfisher Metals? They're our main supplier."
        for sentence in sentences(message.text):
            if sentence.rstrip().endswith("?"):
                asked = sentence
                continue
            if is_filler(sentence, self.guidance):
                continue
            clauses = split_clauses(with_topic(asked, sentence), self.guidance)
            asked = ""
            if answers_why and not clauses.reason and not self._match_slots(self._bare(clauses)):
                self._answer_fact(run, index, clauses.body, anchor)
            else:
                made = self._statement_facts(run, index, clauses, anchor, previous)
                if clauses.reason:
                    self._reason_fact(run, index, clauses, anchor, made)
                    self._reason_slot_facts(run, index, clauses.reason, anchor)
            answers_why = False

    def _bare(self, clauses: Clauses, dates: list[DateMention] | None = None) -> str:
        """The statement as slot patterns see it: no dates, no contractions, simple present,
        and the speaker carried to a second verb."""
        stripped = strip_dates(clauses.statement, dates or [])
        return carry_speaker(simple_present(expand_contractions(stripped)))

    def _statement_facts(
        self,
        run: _Run,
        index: int,
        clauses: Clauses,
        anchor: datetime,
        previous: Message | None,
    ) -> list[Draft]:
        if is_pointer(clauses.statement):
            return []  # "That was because ...": the reason alone says something
        dates = find_dates(clauses.statement, anchor)
        bare = self._bare(clauses, dates)
        matches = self._match_slots(bare, _context_slots(run))
        if matches:
            made = [self._slot_fact(run, index, m, clauses, dates, anchor) for m in matches]
            rests = _uncovered(bare, matches)
            made.extend(run.add(Draft("", _note(r), None, [index])) for r in rests)
            return made
        intent = reply_intent(clauses, previous, self.guidance, dates)
        if intent is not None:
            text, topic = intent
            draft = Draft("", text, f"intent:{value_key(topic)}", [index - 1, index])
            draft.condition = clauses.condition or clauses.hedge
            return [run.add(draft)]
        if not _is_statement(bare) or not clauses.body or is_fragment(clauses.statement):
            return []
        text = _note(_date_last(clauses.body, anchor))
        draft = Draft("", text, None, [index], condition=clauses.condition or clauses.hedge)
        if not clauses.tentative:  # "went to a support group yesterday" happened on that day
            draft.valid_from = _past_day(dates, anchor)
        return [run.add(draft)]

    def _match_slots(self, text: str, context: frozenset[str] = frozenset()) -> list[_SlotMatch]:
        found = [
            _SlotMatch(spec, pattern, m.start(), m.end(), clean(m.group("value")))
            for spec in self.guidance.slots
            for pattern in spec.patterns
            for m in pattern.regex.finditer(text)
            if clean(m.group("value"))
        ]
        # Earliest first, then the longest: "switched to the Pro plan" is a plan, not a supplier.
        # Of two readings of the same words ("moved over to X": a place or a supplier), the
        # slot the conversation or the namespace already speaks of.
        found.sort(key=lambda m: (m.start, m.start - m.end, m.spec.name not in context))
        chosen: list[_SlotMatch] = []
        for match in found:
            if all(match.start >= c.end or match.end <= c.start for c in chosen):
                chosen.append(match)
        return chosen

    def _slot_fact(
        self,
        run: _Run,
        index: int,
        match: _SlotMatch,
        clauses: Clauses,
        dates: list[DateMention],
        anchor: datetime,
    ) -> Draft:
        text = match.pattern.text.format(value=match.value)
        if clauses.tentative and text.startswith("plans to "):
            text = "may " + text.removeprefix("plans to ")
        if dates:
            text += " " + " ".join(d.annotated for d in dates)
        if clauses.condition:
            text += f", {clauses.condition}"
        elif clauses.hedge and not text.startswith(("may ", "is considering ")):
            text += f" ({clauses.hedge})"
        slot = match.spec.name
        if not match.spec.single_valued:
            slot = f"{slot}:{value_key(match.value)}"
        elif clauses.tentative:
            slot = f"intent:{slot}"  # a hedged state is only an intent, never the new state
        draft = Draft("", text, slot, [index], condition=clauses.condition or clauses.hedge)
        draft.value = match.value
        # A phrase that states a change ("no longer likes ...") says the value no longer holds.
        draft.negated = match.pattern.updates
        if not clauses.tentative:
            marked = self.guidance.update_markers.search(clauses.statement) is not None
            changed = match.pattern.updates or (match.spec.update_markers and marked)
            targets = update_targets(slot, run.drafts, run.known)
            if changed or targets:
                draft.relation, draft.related_to = RelationKind.UPDATES, targets
            draft.valid_from = _past_day(dates, anchor)
        return run.add(draft)

    def _reason_slot_facts(self, run: _Run, index: int, reason: str, anchor: datetime) -> None:
        """A reason may state a fact of its own ("because the parcels were always late" is a
        complaint). Only keyed slots are taken from it: a one-value state named in a reason
        is background to the change, not a change of its own."""
        clauses = split_clauses(reason, self.guidance)
        for match in self._match_slots(expand_contractions(clauses.statement)):
            if not match.spec.single_valued:
                self._slot_fact(run, index, match, clauses, [], anchor)

    def _reason_fact(
        self, run: _Run, index: int, clauses: Clauses, anchor: datetime, made: list[Draft]
    ) -> None:
        reason = clauses.reason or ""
        explained = made[-1] if made else explained_by_later_reason(run.drafts)
        because = reason_words(annotate(reason, find_dates(reason, anchor)))
        opener = (clauses.reason_opener or "because").lower()
        if explained is None:
            if word_count(reason) >= MIN_STATEMENT_WORDS:
                run.add(Draft("", f"{opener} {because}", None, [index]))
            return
        self._add_reason(run, index, explained, opener, because)

    def _answer_fact(self, run: _Run, index: int, answer: str, anchor: datetime) -> None:
        """An answer to "why?" explains the latest change; a complaint in it is one too."""
        explained = explained_by_later_reason(run.drafts)
        if explained is None or word_count(answer) < 2:
            return
        opener, because = answer_as_reason(annotate(answer, find_dates(answer, anchor)))
        self._add_reason(run, index, explained, opener, because)
        self._reason_slot_facts(run, index, answer, anchor)

    def _add_reason(
        self, run: _Run, index: int, explained: Draft, opener: str, because: str
    ) -> None:
        previous = previous_value(explained, run.drafts, run.known, self.guidance)
        text = reason_note(explained, opener, because, previous)
        run.add(reason_draft(explained, text, index))


def _context_slots(run: _Run) -> frozenset[str]:
    """The slots the conversation so far and the namespace hold facts of."""
    slots = [d.slot for d in run.drafts] + [k.slot for k in run.known]
    return frozenset(s.split(":", 1)[0] for s in slots if s)


def _note(text: str) -> str:
    """A plain note: no filler, third person, "my team and I ..." about the subject."""
    tidy = without_filler(clean(text))
    return with_partner(tidy) or third_person(tidy)
