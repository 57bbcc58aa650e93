"""What the blind runs measure, per domain.

- Proposed facts: a proposal matches an expected one of the same session when its field is
  the expected field and its value holds every expected keyword (case-insensitive; a number
  said in words counts as its digits, "three bedrooms" holds "3", read by `text2num`;
  keywords that spell one word, "3" and "three", "Björn" and "Bjorn", "7,500" and "7500",
  ask for it once, and accents are folded); one to one, except that a list field's proposal
  holds every expected item it names (its values are the field's items). Recall is over the
  expected proposals, precision over the proposals made (right when it matched at least
  one). ADR 0122 revised the two exceptions; ADR 0222 the spellings.
- Updates and corrections recognised: expected proposals that change an earlier value
  (`updates` set) and were matched: proposed as the field's new value.
- Not-proposed violations: a proposal of the session, matching no expected one, whose value
  holds every keyword of a must-not-be-proposed item (a third party's fact, small talk...).
- Forget requests noticed: a sentence of the session's subject lines judged a request to
  forget (as the product judges them, sentence by sentence), when the session has one (a
  sentence judged so in a session without one is a false alarm). Placed: an expected request
  naming a field, and a pending forget request on that field proposed in the session (the
  review queue's). A forget request proposes no value: it is counted apart from the
  proposals, never as a made proposal.
- Right note in the top 3: one of recall's first three notes holds every answer keyword.
  Stale in the top 3: a note holds a stale keyword (an outdated, corrected, forgotten or
  rejected value, as a whole word) and not the answer. A question whose answer is empty
  (the value was forgotten) counts only for staleness.
- Answers: the yes / no / neither confusion of a reply classifier; a false yes is a reply
  labelled no or neither that the classifier takes for a yes.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from text_to_num import alpha2digit

from factledger.bench.evalsets.cases import LIST_FIELDS, Answer, Case
from factledger.bench.evalsets.run import CaseRun
from factledger.bench.proposal_eval import Made
from factledger.domain.provenance import Operation
from factledger.domain.said_lines import parse_line_refs
from factledger.domain.values import ListValue, TextValue

LABELS = ("yes", "no", "neither")


@dataclass(slots=True)
class Tally:
    cases: int = 0
    expected: int = 0
    made: int = 0
    matched: int = 0
    made_right: int = 0  # proposals made that matched at least one expected
    updates: int = 0
    updates_matched: int = 0
    corrections: int = 0
    corrections_matched: int = 0
    not_proposed: int = 0
    violations: int = 0
    forget_sessions: int = 0
    forgets_noticed: int = 0
    forget_false_alarms: int = 0
    forget_fields: int = 0  # expected requests that name a field
    forgets_placed: int = 0  # ... with a forget request proposed on that field
    # Forget requests made on a field no request of their session names, where some name one:
    # a reviewer approving them would forget the wrong field (ADR 0170).
    forgets_misplaced: int = 0
    # Forget requests made on a field in a session whose requests name none ("forget what I
    # said about my divorce" placed on household size): as wrong as a misplaced one, but
    # `forgets_misplaced` counts only sessions where some request names a field.
    forgets_on_unnamed: int = 0
    forget_requests_made: int = 0
    # Requests to forget what was said (ADR 0174) made, and those naming a line that holds a
    # keyword of one of the writers' requests of their session.
    said_requests_made: int = 0
    said_requests_right: int = 0
    forget_item_requests: int = 0  # requests made that name items of a list (ADR 0160)
    forget_items_right: int = 0  # ... on a field the writer's request names, a keyword of it
    removals_made: int = 0  # list items proposed for removal, by change (ADR 0159)
    removals_right: int = 0  # ... whose items hold a word of a value the writer outdated
    # Proposals of a text or list value whose evidence quote does not hold the value's words
    # (every item of a list), case folded: a reviewer's proof that does not show what it
    # proves (ADR 0176).
    quotes_without_value: int = 0
    # Proposals of a text or list value that holds a line break (ADR 0178).
    values_across_lines: int = 0
    # True facts matched whose writer's value a subject line of their session says word for
    # word (case aside), and those of them proposed whole: the proposal's value holds all of
    # the writer's ("Piotr Nowicki", not the keyword "Piotr"; ADR 0220). Keywords decide a
    # match; these say whether a reviewer reads the value as it was said.
    values_said: int = 0
    values_whole: int = 0
    # The words of every value proposal made, and, over the `values_said` facts, the words
    # their proposals hold beyond the writer's value's count: keywords reward a longer value,
    # and these say what a reviewer reads around it (ADR 0227).
    value_words: int = 0
    padded_words: int = 0
    questions: int = 0
    answered: int = 0  # questions with answer keywords
    hits: int = 0
    stale_asked: int = 0  # questions with stale keywords
    stale: int = 0

    def add(self, other: Tally) -> None:
        for name in Tally.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, float | int]:
        def ratio(a: int, b: int) -> float:
            return round(a / b, 3) if b else 0.0

        return {
            "cases": self.cases,
            "recall": ratio(self.matched, self.expected),
            "precision": ratio(self.made_right, self.made),
            "expected": self.expected,
            "made": self.made,
            "updates_recognised": ratio(self.updates_matched, self.updates),
            "updates": self.updates,
            "corrections_recognised": ratio(self.corrections_matched, self.corrections),
            "corrections": self.corrections,
            "not_proposed_violations": self.violations,
            "not_proposed": self.not_proposed,
            "forgets_noticed": ratio(self.forgets_noticed, self.forget_sessions),
            "forget_sessions": self.forget_sessions,
            "forget_false_alarms": self.forget_false_alarms,
            "forgets_placed": ratio(self.forgets_placed, self.forget_fields),
            "forget_fields": self.forget_fields,
            "forgets_misplaced": self.forgets_misplaced,
            "forgets_on_unnamed": self.forgets_on_unnamed,
            "forget_requests_made": self.forget_requests_made,
            "said_requests_made": self.said_requests_made,
            "said_requests_right": self.said_requests_right,
            "forget_item_requests": self.forget_item_requests,
            "forget_items_right": self.forget_items_right,
            "removals_made": self.removals_made,
            "removals_right": self.removals_right,
            "quotes_without_value": self.quotes_without_value,
            "values_across_lines": self.values_across_lines,
            "whole_values": ratio(self.values_whole, self.values_said),
            "values_said": self.values_said,
            "values_whole": self.values_whole,
            "words_per_value": round(self.value_words / self.made, 2) if self.made else 0.0,
            "value_words": self.value_words,
            "padded_words": self.padded_words,
            "right_note_top3": ratio(self.hits, self.answered),
            "right_notes": self.hits,
            "answered": self.answered,
            "matched": self.matched,
            "made_right": self.made_right,
            "updates_matched": self.updates_matched,
            "forgets_noticed_count": self.forgets_noticed,
            "forgets_placed_count": self.forgets_placed,
            "questions": self.questions,
            "stale_top3": self.stale,
            "stale_asked": self.stale_asked,
        }


def holds_as_written(text: str, keywords: Iterable[str]) -> bool:
    """The rule before ADR 0222: every keyword as written, in the value as written or with its
    numbers in digits (the lab replays it with `--keywords as-written`)."""
    low = text.lower()
    wanted = [k.lower() for k in keywords]
    if all(k in low for k in wanted):
        return True
    as_digits = alpha2digit(low, "en", threshold=2)
    return as_digits != low and all(k in as_digits for k in wanted)


def holds_once(text: str, keywords: Iterable[str]) -> bool:
    """Every keyword, keywords that spell one word asked for once (ADR 0222)."""
    low = text.lower()
    wanted = [k.lower() for k in keywords]
    if all(k in low for k in wanted):
        return True
    # Every number from two up, as the expected digits say it ("two bedrooms" holds "2"); the
    # library's default (3) leaves an isolated "two" a word. "One" stays a word: it is as
    # often a pronoun ("no one else") as a count.
    forms = {low, _digits(low)}
    forms |= {_folded(f) for f in forms}
    # Keywords that spell one word ("3" and "three", "Björn" and "Bjorn", "7,500" and "7500")
    # ask for it once: a value can hold only one spelling of it.
    spellings: dict[str, list[str]] = {}
    for k in wanted:
        spellings.setdefault(spelling(k), []).append(k)
    return all(
        any(s in form for s in (word, *said) for form in forms) for word, said in spellings.items()
    )


# How a value is read against its keywords; module-level so that the lab can score a run by
# the rule before ADR 0222 beside it (`python -m factledger.bench.evalsets --keywords`).
keyword_reading: Callable[[str, Iterable[str]], bool] = holds_once


def holds_all(text: str, keywords: Iterable[str]) -> bool:
    """Whether `text` holds every one of `keywords`, by the scorer's rule (`keyword_reading`)."""
    return keyword_reading(text, keywords)


def _digits(text: str) -> str:
    """Numbers said in words as digits, from two up, thousands unseparated ("two-bed" reads
    as "2 bed")."""
    spaced = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)
    digits = alpha2digit(spaced, "en", threshold=2)
    # Where no number was read in words the hyphens stay ("well-known" is one word).
    return _THOUSANDS.sub("", digits if digits != spaced else text)


def _folded(text: str) -> str:
    """`text` without its accents ("björn" as "bjorn")."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def spelling(keyword: str) -> str:
    """The one spelling every way of writing `keyword` shares: accents folded, a number in
    digits ("one" too: a keyword said alone is a count), thousands unseparated."""
    digits = alpha2digit(keyword.replace("-", " "), "en", threshold=0)
    return _THOUSANDS.sub("", _folded(digits))


_THOUSANDS = re.compile(r"(?<=\d)[,.](?=\d{3}(?!\d))")


def holds_expected(made: Made, field: str, keywords: Iterable[str]) -> bool:
    return made.proposal.field == field and holds_all(made.value, keywords)


def match_expected(
    case: Case, made: Sequence[Made], fields: Mapping[str, str] | None = None
) -> dict[tuple[int, int], Made]:
    """(session, index of the expected proposal) -> the proposal that matches it: the first
    of the session holding it not taken by an earlier one (a list field's, never taken).
    `fields`: a reviewer's map of the case's fields onto the names proposed under (`score_run`);
    a field it leaves out matches nothing."""
    left = list(made)
    hits: dict[tuple[int, int], Made] = {}
    for n, session in enumerate(case.sessions):
        for e, expected in enumerate(session.proposals):
            field = expected.field if fields is None else fields.get(expected.field)
            if field is None:
                continue
            hit = next(
                (m for m in left if m.session == n and holds_expected(m, field, expected.keywords)),
                None,
            )
            if hit is None:
                continue
            hits[(n, e)] = hit
            if expected.field not in LIST_FIELDS:
                left.remove(hit)
    return hits


def said_word_for_word(lines: Sequence[tuple[str, str]], value: str) -> bool:
    """Whether a subject line says `value` as written (case aside, from a word start)."""
    wanted = value.strip().casefold()
    return bool(wanted) and any(
        role == "subject" and re.search(rf"(?<!\w){re.escape(wanted)}", text.casefold())
        for role, text in lines
    )


def _holds_word(text: str, keyword: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(keyword.lower())}(?!\w)", text.lower()) is not None


def _value_words(made: Made) -> tuple[str, ...]:
    """The words of a text value, or the items of a list; none for a typed value."""
    value = made.proposal.value
    if isinstance(value, TextValue):
        return (value.value,)
    return value.items if isinstance(value, ListValue) else ()


def quote_holds_value(made: Made) -> bool:
    """Whether the proposal's evidence quote holds its value's words (each item of a list);
    a proposal with no evidence, or of a typed value, holds it by definition here."""
    evidence = made.proposal.evidence
    if evidence is None:
        return True
    quote = evidence.quote.casefold()
    return all(words.casefold() in quote for words in _value_words(made))


def _across_lines(made: Made) -> bool:
    return any("\n" in words for words in _value_words(made))


# Requests to forget, removals and said-lines requests state no value of a field: each is
# scored apart (`score_run`), never as a proposal right or wrong.
COUNTED_APART = (Operation.FORGET, Operation.REMOVE, Operation.FORGET_SAID)


def value_proposals(made: Iterable[Made]) -> list[Made]:
    """The proposals of `made` that state a value, the ones precision is counted over."""
    return [m for m in made if m.proposal.operation not in COUNTED_APART]


def score_run(
    run: CaseRun,
    forgets: Mapping[int, Sequence[int]] | None = None,
    fields: Mapping[str, str] | None = None,
) -> Tally:
    """One case's tally; `forgets` maps a session to the subject lines judged a request to
    forget (None: the product has no such judgement). `fields` is a reviewer's map of the
    case's own fields onto the names the product proposed under (a kind nobody configured):
    a true fact of a field the map leaves out could not be proposed, and is not expected."""
    tally = Tally(cases=1)
    case = run.case
    asked_to_forget = [m for m in run.made if m.proposal.operation is Operation.FORGET]
    # A removal states no value: counted apart, right when the writer outdated what it removes.
    removals = [m for m in run.made if m.proposal.operation is Operation.REMOVE]
    said = [m for m in run.made if m.proposal.operation is Operation.FORGET_SAID]
    tally.said_requests_made = len(said)
    tally.said_requests_right = sum(_names_asked_line(run, m) for m in said)
    left = value_proposals(run.made)
    tally.made = len(left)
    tally.forget_requests_made = len(asked_to_forget)
    tally.removals_made = len(removals)
    tally.removals_right = sum(_outdated_by_writer(case, m) for m in removals)
    hits = match_expected(case, left, fields)
    right = {id(m) for m in hits.values()}
    tally.made_right = len(right)
    tally.quotes_without_value = sum(not quote_holds_value(m) for m in left)
    tally.values_across_lines = sum(_across_lines(m) for m in left)
    tally.value_words = sum(len(m.value.split()) for m in left)
    for n, session in enumerate(case.sessions):
        expected_here = [
            (e, x) for e, x in enumerate(session.proposals) if fields is None or x.field in fields
        ]
        tally.expected += len(expected_here)
        for e, expected in expected_here:
            matched = (n, e) in hits
            tally.matched += matched
            if matched and said_word_for_word(session.lines, expected.value):
                tally.values_said += 1
                made_value = hits[(n, e)].value
                tally.values_whole += expected.value.casefold() in made_value.casefold()
                tally.padded_words += max(0, len(made_value.split()) - len(expected.value.split()))
            if expected.updates is not None:
                tally.updates += 1
                tally.corrections += expected.correction
                tally.updates_matched += matched
                tally.corrections_matched += matched and expected.correction
        for item in session.not_proposed:
            tally.not_proposed += 1
            if item.keywords and any(
                m.session == n and id(m) not in right and holds_all(m.value, item.keywords)
                for m in left
            ):
                tally.violations += 1
        noticed = bool(forgets and forgets.get(n))
        if session.forgets:
            tally.forget_sessions += 1
            tally.forgets_noticed += noticed
            placed = {m.proposal.field for m in asked_to_forget if m.session == n}
            named = [f.field for f in session.forgets if f.field]
            tally.forget_fields += len(named)
            tally.forgets_placed += sum(f in placed for f in named)
            if named:
                tally.forgets_misplaced += len(placed - set(named))
            else:
                tally.forgets_on_unnamed += len(placed)
        elif noticed:
            tally.forget_false_alarms += 1
        for made in (m for m in asked_to_forget if m.session == n and m.value):
            tally.forget_item_requests += 1
            tally.forget_items_right += any(
                f.field == made.proposal.field
                and any(k.lower() in made.value.lower() for k in f.keywords)
                for f in session.forgets
            )
    for asked in run.asked:
        question = case.sessions[asked.session].questions[asked.index]
        tally.questions += 1
        if question.answer:
            tally.answered += 1
            tally.hits += any(holds_all(note, question.answer) for note in asked.notes)
        if question.stale:
            tally.stale_asked += 1
            tally.stale += any(
                any(_holds_word(note, k) for k in question.stale)
                and not (question.answer and holds_all(note, question.answer))
                for note in asked.notes
            )
    return tally


def said_line_texts(run: CaseRun, made: Made) -> list[str]:
    """The words of the lines a request to forget what was said names (the run records each
    case's session n as `<writer>-<id>-s<n>`, without the lines the screen withheld)."""
    value = made.proposal.value
    if not isinstance(value, ListValue):
        return []
    texts = []
    for session_id, index in parse_line_refs(value.items):
        n = int(session_id.rsplit("-s", 1)[1])
        withheld = run.withheld.get(n, frozenset())
        kept = [i for i in range(len(run.case.sessions[n].lines)) if i not in withheld]
        if index < len(kept):
            texts.append(run.case.sessions[n].lines[kept[index]][1])
    return texts


def _names_asked_line(run: CaseRun, made: Made) -> bool:
    words = [k.lower() for f in run.case.sessions[made.session].forgets for k in f.keywords]
    return any(w in text.lower() for text in said_line_texts(run, made) for w in words)


def _outdated_by_writer(case: Case, removal: Made) -> bool:
    """Whether a removal's items hold a word the writer marked outdated: a negated value of
    its session, a stale word of a later question, or the old value of an update of its field
    said in its session."""
    n = removal.session
    session = case.sessions[n]
    words = [k for item in session.not_proposed if item.why == "negated" for k in item.keywords]
    words += [k for later in case.sessions[n:] for q in later.questions for k in q.stale]
    words += [
        x.updates for x in session.proposals if x.field == removal.proposal.field and x.updates
    ]
    return any(w and w.lower() in removal.value.lower() for w in words)


@dataclass(slots=True)
class Scores:
    domains: dict[str, Tally] = field(default_factory=dict)
    # Each case's own counts, by `writer/id`: what a paired resampling of a judge's cases
    # reads (`judge_noise`).
    by_case: dict[str, Tally] = field(default_factory=dict)

    def add(self, case: Case, tally: Tally) -> None:
        self.domains.setdefault(case.domain, Tally()).add(tally)
        self.by_case.setdefault(f"{case.writer}/{case.id}", Tally()).add(tally)

    def per_case(self) -> dict[str, dict[str, int]]:
        """Every case's counts (the tally's own, no ratios), by `writer/id`."""
        return {
            key: {name: getattr(tally, name) for name in Tally.__slots__}
            for key, tally in self.by_case.items()
        }

    def as_dict(self) -> dict[str, dict[str, float | int]]:
        total = Tally()
        for tally in self.domains.values():
            total.add(tally)
        return {"all": total.as_dict(), **{d: t.as_dict() for d, t in sorted(self.domains.items())}}


@dataclass(frozen=True, slots=True)
class AnswerScores:
    confusion: Mapping[tuple[str, str], int]  # (label, predicted) -> count

    @property
    def false_yes(self) -> int:
        return sum(n for (label, said), n in self.confusion.items() if said == "yes" != label)

    @property
    def false_declines(self) -> int:
        """Replies that are not a no read as one: each declines the change it answers."""
        return sum(n for (label, said), n in self.confusion.items() if said == "no" != label)

    def accepted(self, label: str) -> float:
        total = sum(n for (lab, _), n in self.confusion.items() if lab == label)
        return round(self.confusion.get((label, label), 0) / total, 3) if total else 0.0

    def as_dict(self) -> dict[str, object]:
        total = sum(self.confusion.values())
        right = sum(self.confusion.get((lab, lab), 0) for lab in LABELS)
        return {
            "n": total,
            "accuracy": round(right / total, 3) if total else 0.0,
            "false_yes": self.false_yes,
            "false_declines": self.false_declines,
            **{f"{lab}_accepted": self.accepted(lab) for lab in LABELS},
            "confusion": {
                f"{lab}->{said}": self.confusion.get((lab, said), 0)
                for lab in LABELS
                for said in LABELS
            },
        }


def score_answers(answers: Sequence[Answer], predicted: Sequence[str]) -> AnswerScores:
    return AnswerScores(Counter(zip((a.label for a in answers), predicted, strict=True)))
