"""The step that turns every recorded session into the model's proposals.

It runs after the session is saved, never inside the request: the sync worker plans one
`propose` item per recorded session and hands it here (retried with backoff, then a dead
letter, like every sync item). For one session it:

1. loads the subject; skips it when proposals are off for its tenant and kind, when it was
   erased, or when this model has already reviewed the session (a rerun is a no-op);
2. notices the subject's requests to forget (`forget_requests`) and places each on the field
   it concerns; runs the configured extractor over the transcript without them, in its
   context (tenant, subject kind, channel, conversation type), which picks the guidance;
3. maps the facts to the kind's fields (`candidates`); with a reader of dropped items, reads
   which held list items the subject's sentences say no longer hold (`dropped`, ADR 0159);
   when asked, reads the request sentences once more for the value replacing a held field
   (`replacements`, ADR 0151);
   hands the candidates to `Ledger.review_session`, which weighs them against the subject
   as saved (`plan`).

Logs carry ids, counts and error types, never what was said.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

import structlog

from factledger.application.judgement.ports import FieldMentions, SentenceCloseness, SentenceJudge
from factledger.application.ledger.commands import ReviewSession
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.extraction import (
    ExtractionContext,
    ExtractionRequest,
    FieldSlot,
)
from factledger.application.memory.ports import Extractor
from factledger.application.proposals.candidates import Candidate, TypedReading, candidates_from
from factledger.application.proposals.dropped import (
    DroppedItemsReader,
    held_lists,
    removal_candidates,
)
from factledger.application.proposals.modes import ProposalModes
from factledger.application.proposals.schema import DEFAULT_FEEDS, KindFeeds, feeds_of
from factledger.application.proposals.typed import TYPED, ValueReader
from factledger.application.review.forget_requests import (
    place_requests,
    said_requests,
    without_requests,
)
from factledger.application.review.replacements import replacements_in_requests
from factledger.domain.events import SessionRecorded
from factledger.domain.provenance import STANDING, Actor, Operation
from factledger.domain.sessions import transcript_from_payload
from factledger.domain.subject import Subject
from factledger.domain.transcript import Message
from factledger.domain.values import render

log = structlog.get_logger(__name__)


def held_fields(subject: Subject) -> frozenset[str]:
    """The fields the subject holds a statement of: the extractor may read them at a lower
    bar, since a session stating one of them again is where an update is said (ADR 0128)."""
    stated = {
        c.field
        for c in subject.changes.values()
        if c.status in STANDING and c.operation is Operation.SET
    }
    return frozenset(subject.fields) | stated


def held_values(subject: Subject) -> dict[str, str]:
    """The words each held field holds: the profile's value, else the value of its latest
    standing `set` change (what a new statement of the field is compared with: ADR 0137)."""
    values = {
        c.field: render(c.proposal.value)
        for c in subject.changes.values()
        if c.status in STANDING and c.operation is Operation.SET and c.proposal.value is not None
    }
    values.update({name: render(f.value) for name, f in subject.fields.items()})
    return values


class Review(StrEnum):
    PROPOSED = "proposed"  # reviewed now (possibly proposing nothing)
    ALREADY = "already"  # this model reviewed the session before
    OFF = "off"  # proposals are off for the subject's tenant and kind
    ERASED = "erased"


@dataclass(frozen=True, slots=True)
class SessionProposer:
    """The product's model: `model` is its actor (`model:<extractor>@<version>`)."""

    ledger: Ledger
    extractor: Extractor
    model: Actor
    feeds: Mapping[str, KindFeeds] = field(default_factory=lambda: DEFAULT_FEEDS)
    modes: ProposalModes = field(default_factory=ProposalModes)
    # Notices requests to forget; None: none is noticed, and the transcript goes as said.
    judge: SentenceJudge | None = None
    # Reads the request sentences once more for the value replacing a held single-valued
    # field ("remove my number, email me instead"), quoting only that value (ADR 0151).
    replacements_in_requests: bool = False
    # A request to forget that concerns no field names the line it concerns (ADR 0174, 0175:
    # `forget_requests.place_requests`; the deployment's setting is on unless turned off).
    forget_said_lines: bool = False
    # A second reading of how close a request to forget is to each field, beside the judge's
    # (the multilingual encoder's, ADR 0200); None: the judge's alone.
    placement_reading: SentenceCloseness | None = None
    # Whether a request placed by meaning speaks of the field it is placed on, read by the
    # extractor's field reader (ADR 0218); None: closeness alone places it.
    placement_mentions: FieldMentions | None = None
    # Reads a typed field's value (number, money, date) from the words; None: typed fields
    # are proposed by callers only (ADR 0158).
    values: ValueReader | None = None
    # Reads which held list items a subject sentence says no longer hold, proposed for
    # removal (ADR 0159); None: list fields are only ever extended by the model.
    dropped: DroppedItemsReader | None = None

    async def _removals(
        self, subject: Subject, transcript: Sequence[Message], feeds: KindFeeds, session_id: str
    ) -> list[Candidate]:
        """The session's removal candidates; a reader that fails costs the removals only
        (logged by error type): the session's other proposals still go in, where a raised
        error would retry and dead-letter them all."""
        if self.dropped is None:
            return []
        try:
            lists = held_lists(subject, feeds)
            return await removal_candidates(transcript, lists, self.dropped, feeds, session_id)
        except Exception as exc:  # the model's fault on one session
            log.warning(
                "proposals.dropped_items_failed",
                subject_id=str(subject.id),
                error_type=type(exc).__name__,
            )
            return []

    async def review(self, tenant: str, event: SessionRecorded) -> Review:
        subject_id = event.originator_id
        subject = await asyncio.to_thread(self.ledger.subject, tenant, subject_id)
        if subject.erased:
            return Review.ERASED
        if not self.modes.proposes(tenant, subject.kind):
            return Review.OFF
        if subject.has_reviewed(event.session_id):
            return Review.ALREADY
        said = transcript_from_payload(event.transcript or [])
        feeds = feeds_of(self.feeds, subject.kind)
        requests = [] if self.judge is None else await said_requests(said, self.judge)
        # The request sentences are no facts: the extractor reads the session without them.
        transcript = without_requests(said, requests)
        placed = (
            []
            if self.judge is None or not requests
            else await place_requests(
                subject,
                event.session_id,
                requests,
                [f.field for f in feeds.fields],
                self.judge,
                name_lines=self.forget_said_lines,
                second_reading=self.placement_reading,
                mentions=self.placement_mentions,
            )
        )
        context = ExtractionContext(tenant, subject.kind, event.channel, event.conversation_type)
        held, values = held_fields(subject), held_values(subject)
        fields = tuple(
            FieldSlot(f.field, f.slots[0], f.many, f.field in held, values.get(f.field))
            for f in feeds.fields
            if f.slots
        )
        request = ExtractionRequest(
            transcript, occurred_at=event.started_at, context=context, fields=fields
        )
        facts = await self.extractor.extract(request) if transcript else []
        typed = None
        if self.values is not None and any(f.type in TYPED for f in feeds.fields):
            typed = TypedReading(self.values, event.started_at.date())
        if typed is None:
            candidates = candidates_from(facts, transcript, feeds, event.session_id)
        else:  # dates are parsed (the first loads dateparser's data, about a second): off the
            # event loop, which may be the server's
            candidates = await asyncio.to_thread(
                candidates_from, facts, transcript, feeds, event.session_id, typed
            )
        if transcript:
            candidates += await self._removals(subject, transcript, feeds, event.session_id)
        if self.replacements_in_requests and requests:
            candidates += await replacements_in_requests(
                self.extractor,
                replace(request, transcript=said),
                requests,
                feeds,
                event.session_id,
                fed={c.feed.field for c in candidates},
                typed=typed,
            )
        command = ReviewSession(
            tenant,
            subject_id,
            event.session_id,
            self.model,
            tuple(candidates),
            forget_requests=tuple(placed),
        )
        result = await asyncio.to_thread(self.ledger.review_session, command)
        log.info(
            "proposals.session_reviewed",
            subject_id=str(subject_id),
            facts=len(facts),
            candidates=len(candidates),
            forget_requests=len(requests),
            forget_requests_placed=len(placed),
            applied=result.applied,
            position=result.position,
        )
        return Review.PROPOSED
