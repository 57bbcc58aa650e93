"""The pieces of one rule extraction: its drafts, its slot matches, and what makes a clause a
statement worth a note."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from factledger.adapters.extraction.rules.clauses import without_interjection
from factledger.adapters.extraction.rules.dates import DateMention, annotate, find_dates
from factledger.adapters.extraction.rules.guidance import SlotPattern, SlotSpec
from factledger.adapters.extraction.rules.links import Draft
from factledger.adapters.extraction.rules.notes import with_partner, without_filler
from factledger.adapters.extraction.rules.text import clean, third_person, word_count
from factledger.application.memory.extraction import KnownFact

MIN_STATEMENT_WORDS = 3
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|we|we're|us|our)\b", re.I)
_CONJUNCTIONS = re.compile(
    r"^(?:and|but|so|also|or|then)\b|\b(?:and|but|so|or)(?: then)?$", re.IGNORECASE
)
# "You are doing great" is about the listener; "Your pricing is higher" may be a complaint.
_LISTENER_SUBJECT = re.compile(r"^(?:you|you're|you've|you'll|you'd)\b", re.IGNORECASE)


@dataclass(slots=True)
class Run:
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

    def restated(self, slot: str, value: str) -> Draft | None:
        """The latest fact of `slot` when it already holds `value` (said again)."""
        latest = next((d for d in reversed(self.drafts) if d.slot == slot), None)
        if latest is None or latest.negated or (latest.value or "").lower() != value.lower():
            return None
        return latest


@dataclass(frozen=True, slots=True)
class SlotMatch:
    spec: SlotSpec
    pattern: SlotPattern
    start: int
    end: int
    value: str


def is_statement(text: str) -> bool:
    """Says something about the subject: enough words, and not only about the listener."""
    core = without_interjection(text)
    if word_count(core) < MIN_STATEMENT_WORDS:
        return False
    return not (_LISTENER_SUBJECT.match(core) and not _FIRST_PERSON.search(core))


def date_last(text: str, anchor: datetime) -> str:
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


def past_day(dates: list[DateMention], anchor: datetime) -> datetime | None:
    """The first resolved date that is not in the future, as the start of that day."""
    past = [d.day for d in dates if d.day <= anchor.date()]
    return datetime.combine(past[0], datetime.min.time(), anchor.tzinfo) if past else None


def uncovered(text: str, matches: list[SlotMatch]) -> list[str]:
    """Clauses of `text` outside every slot match that still say something of the subject
    ("We're a clinic" in "We're a clinic with 25 staff")."""
    edges = [0, *(e for m in matches for e in (m.start, m.end)), len(text)]
    gaps = [text[edges[i] : edges[i + 1]] for i in range(0, len(edges), 2)]
    rests = [_CONJUNCTIONS.sub("", g.strip(" ,;")).strip(" ,;") for g in gaps]
    return [r for r in rests if _FIRST_PERSON.search(r) and is_statement(r)]


def context_slots(run: Run) -> frozenset[str]:
    """The slots the conversation so far and the namespace hold facts of."""
    slots = [d.slot for d in run.drafts] + [k.slot for k in run.known]
    return frozenset(s.split(":", 1)[0] for s in slots if s)


def plain_note(text: str) -> str:
    """A plain note: no filler, third person, "my team and I ..." about the subject."""
    tidy = without_filler(clean(text))
    return with_partner(tidy) or third_person(tidy)
