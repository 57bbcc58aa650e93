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
import time
from datetime import datetime
from functools import cache
from pathlib import Path

import structlog

from factledger.adapters.extraction.rules.clauses import (
    Clauses,
    is_filler,
    split_clauses,
)
from factledger.adapters.extraction.rules.context import with_context
from factledger.adapters.extraction.rules.dates import (
    DateMention,
    annotate,
    find_dates,
    strip_dates,
)
from factledger.adapters.extraction.rules.guidance import (
    Guidance,
)
from factledger.adapters.extraction.rules.links import Draft, derive, update_targets
from factledger.adapters.extraction.rules.notes import is_fragment, mid_sentence
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
from factledger.adapters.extraction.rules.routed_guidance import RoutedGuidance
from factledger.adapters.extraction.rules.statements import (
    MIN_STATEMENT_WORDS,
    Run,
    SlotMatch,
    context_slots,
    date_last,
    is_statement,
    past_day,
    plain_note,
    uncovered,
)
from factledger.adapters.extraction.rules.tenses import simple_present
from factledger.adapters.extraction.rules.text import (
    carry_speaker,
    clean,
    expand_contractions,
    sentences,
    value_key,
    with_topic,
    word_count,
)
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

log = structlog.get_logger()

_INLINE_MESSAGES = 20


@cache
def _packaged_routes() -> RoutedGuidance:
    return RoutedGuidance.load()


class RuleExtractor:
    """Deterministic extractor; the default of every self-hosted backend."""

    VERSION = "3"  # bumped when the same guidance would extract differently

    def __init__(
        self, guidance: Guidance | None = None, *, routes: RoutedGuidance | None = None
    ) -> None:
        """One `guidance` for every request, or a `routes` that chooses one per request's
        context; neither: the packaged guidance per conversation type (`RoutedGuidance.load`)."""
        if routes is None:
            routes = RoutedGuidance.single(guidance) if guidance is not None else _packaged_routes()
        self.routes = routes
        # One extractor per other routed guidance, made on first use.
        self._by_guidance: dict[str, RuleExtractor] = {}

    @property
    def guidance(self) -> Guidance:
        """The default guidance. The packaged one compiles at the first extraction rather
        than when the extractor is made: the runtime makes its extractors while it starts,
        and compiling that guidance (its regular expressions) was a twentieth of a start."""
        return self.routes.default

    @classmethod
    def from_guidance_file(cls, path: Path | None = None) -> RuleExtractor:
        """An extractor whose default is a user's guidance file (None: the packaged one),
        with the packaged guidance of each packaged conversation type."""
        if path is None:
            return cls()
        return cls(routes=RoutedGuidance.load(default_path=path))

    def _chosen(self, request: ExtractionRequest) -> RuleExtractor:
        name = self.routes.name_for(request.context)
        guidance = self.routes.guidances[name]
        if guidance is self.guidance:
            return self
        if name not in self._by_guidance:
            self._by_guidance[name] = RuleExtractor(guidance)
        return self._by_guidance[name]

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        # Pure CPU work that grows with the transcript: a long one goes to a thread so the event
        # loop keeps serving recalls meanwhile.
        if len(request.transcript) > _INLINE_MESSAGES:
            return await asyncio.to_thread(self.extract_now, request)
        return self.extract_now(request)

    def extract_now(self, request: ExtractionRequest) -> list[ExtractedFact]:
        """The same as `extract`, for synchronous callers (it does no I/O)."""
        chosen = self._chosen(request)
        if chosen is not self:
            return chosen.extract_now(request)
        started = time.perf_counter()
        run = Run(known=request.known)
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
        self, run: Run, index: int, message: Message, anchor: datetime, previous: Message | None
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
        run: Run,
        index: int,
        clauses: Clauses,
        anchor: datetime,
        previous: Message | None,
    ) -> list[Draft]:
        if is_pointer(clauses.statement):
            return []  # "That was because ...": the reason alone says something
        dates = find_dates(clauses.statement, anchor)
        bare = self._bare(clauses, dates)
        matches = self._match_slots(bare, context_slots(run))
        if matches:
            kept = with_context(bare, matches)
            made = [self._slot_fact(run, index, m, clauses, dates, anchor, c) for m, c in kept]
            rests = uncovered(bare, [m for m, _ in kept])
            made.extend(run.add(Draft("", plain_note(r), None, [index])) for r in rests)
            return made
        intent = reply_intent(clauses, previous, self.guidance, dates)
        if intent is not None:
            text, topic = intent
            draft = Draft("", text, f"intent:{value_key(topic)}", [index - 1, index])
            draft.condition = clauses.condition or clauses.hedge
            return [run.add(draft)]
        if not is_statement(bare) or not clauses.body or is_fragment(clauses.statement):
            return []
        text = plain_note(date_last(clauses.body, anchor))
        draft = Draft("", text, None, [index], condition=clauses.condition or clauses.hedge)
        if not clauses.tentative:  # "went to a support group yesterday" happened on that day
            draft.valid_from = past_day(dates, anchor)
        return [run.add(draft)]

    def _match_slots(self, text: str, context: frozenset[str] = frozenset()) -> list[SlotMatch]:
        found = [
            SlotMatch(spec, pattern, m.start(), m.end(), clean(m.group("value")))
            for spec in self.guidance.slots
            for pattern in spec.patterns
            for m in pattern.regex.finditer(text)
            if clean(m.group("value"))
        ]
        # Earliest first, then the longest: "switched to the Pro plan" is a plan, not a supplier.
        # Of two readings of the same words ("moved over to X": a place or a supplier), the
        # slot the conversation or the namespace already speaks of.
        # Before both: a slot of the conversation type's own guidance over one it inherits
        # ("the export keeps failing" is a support `issue`, not the default's `complaint`).
        found.sort(
            key=lambda m: (
                m.spec.inherited,
                m.start,
                m.start - m.end,
                m.spec.name not in context,
            )
        )
        chosen: list[SlotMatch] = []
        for match in found:
            if all(match.start >= c.end or match.end <= c.start for c in chosen):
                chosen.append(match)
        return sorted(chosen, key=lambda m: m.start)

    def _slot_fact(
        self,
        run: Run,
        index: int,
        match: SlotMatch,
        clauses: Clauses,
        dates: list[DateMention],
        anchor: datetime,
        context: str = "",
    ) -> Draft:
        template = match.pattern.text
        value = match.value if template.startswith("{value}") else mid_sentence(match.value)
        text = f"{template.format(value=value)} {context}".rstrip()
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
        said_before = run.restated(slot, match.value) if not match.pattern.updates else None
        if said_before is not None:
            # "We moved to B last month. We now work with B.": one fact of B, in the words of
            # the later statement, which names the state rather than the move.
            said_before.sources = sorted({*said_before.sources, index})
            said_before.text = text
            return said_before
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
            draft.valid_from = past_day(dates, anchor)
        return run.add(draft)

    def _reason_slot_facts(self, run: Run, index: int, reason: str, anchor: datetime) -> None:
        """A reason may state a fact of its own ("because the parcels were always late" is a
        complaint). Only keyed slots are taken from it: a one-value state named in a reason
        is background to the change, not a change of its own."""
        clauses = split_clauses(reason, self.guidance)
        for match in self._match_slots(expand_contractions(clauses.statement)):
            if not match.spec.single_valued:
                self._slot_fact(run, index, match, clauses, [], anchor)

    def _reason_fact(
        self, run: Run, index: int, clauses: Clauses, anchor: datetime, made: list[Draft]
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

    def _answer_fact(self, run: Run, index: int, answer: str, anchor: datetime) -> None:
        """An answer to "why?" explains the latest change; a complaint in it is one too."""
        explained = explained_by_later_reason(run.drafts)
        if explained is None or word_count(answer) < 2:
            return
        opener, because = answer_as_reason(annotate(answer, find_dates(answer, anchor)))
        self._add_reason(run, index, explained, opener, because)
        self._reason_slot_facts(run, index, answer, anchor)

    def _add_reason(
        self, run: Run, index: int, explained: Draft, opener: str, because: str
    ) -> None:
        previous = previous_value(explained, run.drafts, run.known, self.guidance)
        text = reason_note(explained, opener, because, previous)
        run.add(reason_draft(explained, text, index))
