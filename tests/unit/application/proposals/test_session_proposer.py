"""The product proposes from every recorded session: origin, condition, relation, evidence,
no repeats, supersession, per-tenant modes, and a step that is safe to rerun."""

from __future__ import annotations

from uuid import UUID

import structlog

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.adapters.sqlite.queue_store import SqliteQueueStore
from factledger.application.ledger.commands import ApproveChange
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest, FieldSlot
from factledger.application.proposals.modes import ProposalMode, ProposalModes
from factledger.application.proposals.plan import change_id_for
from factledger.application.review_queue.queue import QueueCursor, QueueFilter
from factledger.domain.proposal import ChangeRecord
from factledger.domain.provenance import ChangeStatus, Operation, Origin
from factledger.domain.transcript import Role
from factledger.domain.values import ListValue, ProfileSchema, TextValue, ValueType
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.review_queue.projection import ReviewQueueProjection
from factledger.projections.review_queue.reader import StoreReviewQueue

from .conftest import KIND, MODEL, TENANT, Rig, day

AGENT, LEAD = Role.AGENT, Role.SUBJECT


def pending(rig: Rig, subject_id: UUID, field: str) -> list[ChangeRecord]:
    return [
        c
        for c in rig.subject(subject_id).changes.values()
        if c.field == field and c.status is ChangeStatus.PENDING
    ]


async def test_a_stated_fact_becomes_the_models_pending_proposal_quoting_the_whole_sentence(
    rig: Rig,
) -> None:
    lead = rig.register()
    rig.record(
        lead,
        "s1",
        day(4, 2),
        (AGENT, "Which vendor handles your printer paper?"),
        (LEAD, "Right now we order from Initech. Our budget is 40k a year."),
    )

    await rig.worker().run_once()

    (supplier,) = pending(rig, lead, "supplier")
    proposal = supplier.proposal
    assert proposal.value == TextValue("Initech")
    assert proposal.origin is Origin.STATED
    assert proposal.operation is Operation.SET
    assert proposal.proposed_by == MODEL
    assert proposal.evidence is not None
    assert (proposal.evidence.session_id, proposal.evidence.message_index) == ("s1", 1)
    assert proposal.evidence.quote == "Right now we order from Initech."
    assert proposal.change_id == change_id_for(lead, "s1", MODEL, "supplier")
    assert "new value of supplier" in proposal.rationale
    (budget,) = pending(rig, lead, "budget")
    assert budget.proposal.evidence is not None
    assert budget.proposal.evidence.quote == "Our budget is 40k a year."


async def test_a_conditional_intent_keeps_its_condition_word_for_word(rig: Rig) -> None:
    lead = rig.register()
    rig.record(
        lead,
        "s1",
        day(4, 2),
        (LEAD, "We might expand to the Lyon office, depending on the board vote."),
    )

    await rig.worker().run_once()

    (intent,) = pending(rig, lead, "purchase_intent")
    assert intent.proposal.condition == "depending on the board vote"
    assert intent.proposal.origin is Origin.STATED
    assert intent.proposal.value == TextValue("may expand to the Lyon office")


async def test_a_derivation_is_an_inferred_extension_of_a_list_field(rig: Rig) -> None:
    lead = rig.register()
    rig.record(
        lead,
        "s1",
        day(4, 2),
        (LEAD, "We have switched to Globex. The shipments from Initech kept arriving late."),
    )

    await rig.worker().run_once()

    (insight,) = pending(rig, lead, "insights")
    assert insight.proposal.origin is Origin.INFERRED
    assert insight.proposal.operation is Operation.APPEND
    assert insight.proposal.value == ListValue(("delivery reliability matters to them",))
    assert insight.proposal.rationale.startswith("derivation of insights")


async def test_facts_that_feed_no_field_propose_nothing(rig: Rig) -> None:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "The weather in Porto was lovely last week."))

    await rig.worker().run_once()

    assert rig.subject(lead).changes == {}
    assert rig.subject(lead).has_reviewed("s1")


async def test_a_newer_statement_supersedes_the_open_proposal_of_its_field(rig: Rig) -> None:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "Right now we order from Initech."))
    await rig.worker().run_once()
    rig.record(lead, "s2", day(5, 6), (LEAD, "We have switched to Globex."))

    await rig.worker().run_once()

    subject = rig.subject(lead)
    older = subject.change(change_id_for(lead, "s1", MODEL, "supplier"))
    newer = change_id_for(lead, "s2", MODEL, "supplier")
    assert older.status is ChangeStatus.SUPERSEDED
    assert subject.superseded_by[older.change_id] == newer
    assert [c.change_id for c in pending(rig, lead, "supplier")] == [newer]


async def test_nothing_repeats_the_current_value_or_an_open_proposal(rig: Rig) -> None:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "Right now we order from Initech."))
    await rig.worker().run_once()
    rig.record(lead, "s2", day(4, 9), (LEAD, "We order from Initech, as I said."))
    await rig.worker().run_once()

    assert len(rig.subject(lead).changes) == 1


async def test_an_update_replaces_a_value_the_profile_holds(rig: Rig) -> None:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "Right now we order from Initech."))
    await rig.worker().run_once()
    first = change_id_for(lead, "s1", MODEL, "supplier")
    rig.ledger.approve_change(ApproveChange(TENANT, lead, first, "reviewer-1"))
    rig.record(lead, "s2", day(5, 6), (LEAD, "Right now we order from Initech."))
    rig.record(lead, "s3", day(5, 7), (LEAD, "We have switched to Globex."))

    await rig.worker().run_once()

    (update,) = pending(rig, lead, "supplier")
    assert update.proposal.based_on_version == 1
    assert update.proposal.rationale.startswith("update of supplier")


async def test_proposals_can_be_off_per_tenant_and_per_subject_kind(rig: Rig) -> None:
    rig.modes = ProposalModes(
        tenants={"quiet": ProposalMode.OFF}, kinds={(TENANT, "patient"): ProposalMode.OFF}
    )
    lead, patient = rig.register(), rig.register("p-1", kind="patient")
    quiet = rig.register("lead-9", tenant="quiet")
    for subject, tenant in ((lead, TENANT), (patient, TENANT), (quiet, "quiet")):
        rig.record(
            subject, "s1", day(4, 2), (LEAD, "Right now we order from Initech."), tenant=tenant
        )

    await rig.worker().run_once()

    assert len(pending(rig, lead, "supplier")) == 1
    assert rig.subject(patient).changes == {}
    assert rig.ledger.subject("quiet", quiet).changes == {}


async def test_the_review_queue_holds_one_pending_change_per_field_after_a_supersession(
    rig: Rig,
) -> None:
    views = ProfileProjection(InMemoryViewStore("profile"))
    queue = ReviewQueueProjection(SqliteQueueStore(":memory:"))
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "Right now we order from Initech."))
    await rig.worker().run_once()
    rig.record(lead, "s2", day(5, 6), (LEAD, "We have switched to Globex."))
    await rig.worker().run_once()

    Follower(rig.ledger, [views, queue]).catch_up()

    page = StoreReviewQueue(queue.store).page(TENANT, QueueFilter(), QueueCursor(), 50)
    (queued,) = [entry.change for entry in page.entries]
    older = change_id_for(lead, "s1", MODEL, "supplier")
    assert queued.change_id == change_id_for(lead, "s2", MODEL, "supplier")
    assert queued.display == "Globex"
    assert queued.supersedes == (older,)
    with views.store.read() as txn:
        doc = txn.get("change", f"{lead}:{older}")
    assert doc is not None
    assert doc["status"] == "superseded"
    assert doc["superseded_by"] == str(queued.change_id)
    rebuilt = ProfileProjection(InMemoryViewStore("rebuilt"))
    rebuilt.rebuild(rig.ledger)
    assert rebuilt.dump() == views.dump()


async def test_a_change_the_kinds_schema_refuses_is_left_out_and_the_others_go_in(
    rig: Rig,
) -> None:
    rig.ledger.schemas = {KIND: ProfileSchema({"supplier": ValueType.TEXT})}
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "Right now we order from Initech. Our budget is 40k."))

    with structlog.testing.capture_logs() as logs:
        await rig.worker().run_once()

    assert [c.field for c in rig.subject(lead).changes.values()] == ["supplier"]
    assert rig.subject(lead).has_reviewed("s1")
    refused = [entry for entry in logs if entry["event"] == "proposals.change_refused"]
    assert [(e["field"], e["error_type"]) for e in refused] == [("budget", "UnknownFieldError")]


async def test_the_step_logs_ids_and_counts_never_what_was_said(rig: Rig) -> None:
    lead = rig.register()
    said = "We might expand to the Lyon office, depending on the board vote."
    rig.record(lead, "s1", day(4, 2), (LEAD, said))

    with structlog.testing.capture_logs() as logs:
        await rig.worker().run_once()

    assert any(entry["event"] == "proposals.session_reviewed" for entry in logs)
    for fragment in ("Lyon", "board vote", "expand"):
        assert fragment not in repr(logs)


async def test_a_value_that_no_longer_holds_is_never_proposed_as_the_value(rig: Rig) -> None:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "We no longer order from Initech."))

    await rig.worker().run_once()

    assert pending(rig, lead, "supplier") == []


async def test_a_customer_gets_the_built_in_customer_fields(rig: Rig) -> None:
    customer = rig.register("customer-3", kind="customer")
    rig.record(
        customer,
        "s1",
        day(4, 2),
        (LEAD, "We are on the Team plan. The sync keeps failing on Fridays. Our budget is 9k."),
    )

    await rig.worker().run_once()

    (plan,) = pending(rig, customer, "plan")
    assert plan.proposal.value == TextValue("Team")
    (complaints,) = pending(rig, customer, "complaints")
    assert isinstance(complaints.proposal.value, ListValue)
    assert pending(rig, customer, "budget") == []  # a lead's question, not a customer's field


class RecordingExtractor:
    """The rule extractor, keeping every request it was given."""

    def __init__(self) -> None:
        self.requests: list[ExtractionRequest] = []
        self._rules = RuleExtractor()

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        self.requests.append(request)
        return await self._rules.extract(request)


async def test_the_extractor_is_told_the_kinds_fields_and_the_slot_feeding_each(
    rig: Rig,
) -> None:
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "Our budget is 40k a year."))
    extractor = RecordingExtractor()

    await rig.worker(extractor).run_once()

    proposing = [r for r in extractor.requests if r.fields]
    assert len(proposing) == 1  # the proposer's; the backend's ingest asks for no fields
    fields = {f.field: f for f in proposing[0].fields}
    assert fields["purchase_intent"] == FieldSlot("purchase_intent", "intent")
    assert fields["complaints"] == FieldSlot("complaints", "complaint", many=True)
    assert fields["budget"] == FieldSlot("budget", "budget")


async def test_the_extractor_is_told_which_fields_the_subject_holds_a_statement_of(
    rig: Rig,
) -> None:
    """A session stating a held field again is where an update is said (ADR 0128): the
    pending budget of the first session is held in the second; a field never said is not."""
    lead = rig.register()
    rig.record(lead, "s1", day(4, 2), (LEAD, "Our budget is 40k a year."))
    extractor = RecordingExtractor()
    await rig.worker(extractor).run_once()
    rig.record(lead, "s2", day(4, 9), (LEAD, "The budget went up to 55k."))

    await rig.worker(extractor).run_once()

    first, second = [r for r in extractor.requests if r.fields]
    assert not any(f.held for f in first.fields)
    assert {f.field for f in second.fields if f.held} == {"budget"}
    # The words held go with it, for a reader that compares a line with them (ADR 0137).
    held_budget = next(f for f in second.fields if f.field == "budget")
    assert held_budget.held_value is not None
    assert "40" in held_budget.held_value
    assert all(f.held_value is None for f in first.fields)


async def test_a_kind_nobody_configured_is_asked_the_fields_expected_of_anyone(
    rig: Rig,
) -> None:
    patient = rig.register("p-4", kind="patient")
    rig.record(patient, "s1", day(4, 2), (LEAD, "I work at Globex as a nurse."))
    extractor = RecordingExtractor()

    await rig.worker(extractor).run_once()

    (proposing,) = [r for r in extractor.requests if r.fields]
    fields = {f.field: f for f in proposing.fields}
    assert {"name", "employer", "job_title", "location", "key_dates", "amounts"} <= set(fields)
    assert fields["contact_preference"] == FieldSlot("contact_preference", "contact_channel")
    assert fields["key_dates"].many
    assert fields["amounts"].many


async def test_a_kind_nobody_configured_gets_proposals_instead_of_none(rig: Rig) -> None:
    patient = rig.register("p-5", kind="patient")
    rig.record(patient, "s1", day(4, 2), (LEAD, "My name is Dana Whitfield."))

    await rig.worker().run_once()

    (name,) = pending(rig, patient, "name")
    assert name.proposal.value == TextValue("Dana Whitfield")
