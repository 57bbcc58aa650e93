"""The product's own model over one recorded story session, run in the caller's thread.

The same steps as the worker's `SessionProposer` (the rule extractor, the kind's feeds,
`Ledger.review_session`), without its event loop, so the story can be told straight into the
ledger. A session is reviewed once: when a sync worker reviews it too, the second review is a
no-op.
"""

from __future__ import annotations

from uuid import UUID

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.application.ledger.commands import ReviewSession
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.extraction import ExtractionContext, ExtractionRequest
from factledger.application.proposals.candidates import candidates_from
from factledger.application.proposals.plan import change_id_for
from factledger.application.proposals.schema import DEFAULT_FEEDS, feeds_of
from factledger.domain.provenance import Actor, ChangeStatus
from factledger.domain.transcript import Message
from factledger.testing.story.script import MODEL

_EXTRACTOR = RuleExtractor()


def review_session(ledger: Ledger, tenant: str, subject_id: UUID, session_id: str) -> None:
    """The model reads the recorded session and proposes what it finds."""
    subject = ledger.subject(tenant, subject_id)
    recorded = subject.sessions[session_id]
    transcript = tuple(Message(role, text, recorded.started_at) for role, text in recorded.messages)
    context = ExtractionContext(
        tenant, subject.kind, recorded.channel.value, recorded.conversation_type
    )
    request = ExtractionRequest(transcript, occurred_at=recorded.started_at, context=context)
    facts = _EXTRACTOR.extract_now(request)
    feeds = feeds_of(DEFAULT_FEEDS, subject.kind)
    candidates = tuple(candidates_from(facts, transcript, feeds, session_id))
    ledger.review_session(ReviewSession(tenant, subject_id, session_id, MODEL, candidates))


def proposed(
    ledger: Ledger,
    tenant: str,
    subject_id: UUID,
    session_id: str,
    field: str,
    model: Actor = MODEL,
) -> UUID:
    """The pending change `model` proposed for `field` from `session_id`."""
    subject = ledger.subject(tenant, subject_id)
    for record in subject.changes.values():
        if (
            record.field == field
            and record.status is ChangeStatus.PENDING
            and record.change_id == change_id_for(subject_id, session_id, model, field)
        ):
            return record.change_id
    raise LookupError(f"the model proposed no {field} from session {session_id}")
