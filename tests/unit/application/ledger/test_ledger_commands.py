"""The ledger's use cases behave the same on every event store."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from uuid import uuid4

import pytest

from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import (
    ApproveChange,
    ConfirmChange,
    ForgetMemory,
    ProposeChange,
    RecordSession,
    RegisterSubject,
    RejectChange,
)
from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import ChangeNotPendingError, ConfirmationNotAllowedError
from factledger.domain.provenance import (
    Actor,
    ActorKind,
    ChangeStatus,
    Evidence,
    Operation,
    Origin,
)
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import MoneyValue, TextValue
from factledger.testing.ledger_stores import LedgerStore, open_ledger
from factledger.testing.manual_clock import ManualClock

MODEL = Actor(ActorKind.MODEL, "extractor")
REVIEWER = Actor(ActorKind.STAFF, "rev-1")
WHEN = datetime(2026, 1, 10, 9, 0, tzinfo=UTC)


def register(ledger: Ledger, tenant: str = "acme") -> RegisterSubject:
    cmd = RegisterSubject(tenant, "lead", "lead-42")
    ledger.register_subject(cmd)
    return cmd


def record(
    ledger: Ledger, session_id: str = "s1", text: str = "We use Supplier A.", said: datetime = WHEN
) -> None:
    subject_id = ledger.subject_id_for("acme", "lead", "lead-42")
    ledger.record_session(
        RecordSession(
            tenant="acme",
            subject_id=subject_id,
            session_id=session_id,
            channel=Channel.WHATSAPP,
            started_at=WHEN,
            ended_at=WHEN,
            transcript=(Message(Role.AGENT, "Hi"), Message(Role.SUBJECT, text, said)),
            summary={"topics": ["suppliers"], "sentiment": 0.5},
            withheld_count=1,
        )
    )


def propose(ledger: Ledger, **overrides: object) -> ProposeChange:
    cmd = ProposeChange(
        tenant="acme",
        subject_id=ledger.subject_id_for("acme", "lead", "lead-42"),
        field="supplier",
        operation=Operation.SET,
        value=TextValue("Supplier A"),
        origin=Origin.STATED,
        proposed_by=MODEL,
        based_on_version=0,
        evidence=Evidence("s1", 1, "Supplier A"),
    )
    cmd = replace(cmd, **overrides)  # type: ignore[arg-type]
    ledger.propose_change(cmd)
    return cmd


def test_registering_twice_is_a_no_op(ledger: Ledger) -> None:
    first = ledger.register_subject(RegisterSubject("acme", "lead", "lead-42"))
    again = ledger.register_subject(RegisterSubject("acme", "lead", "lead-42"))
    assert first.applied
    assert not again.applied
    assert first.subject_id == again.subject_id
    assert again.subject_version == 1


def test_every_event_survives_the_store(ledger_store: LedgerStore, ledger: Ledger) -> None:
    register(ledger)
    record(ledger)
    kept = propose(
        ledger, field="budget", value=MoneyValue(Decimal("9.5"), "EUR"), origin=Origin.INFERRED
    )
    rejected = propose(ledger, origin=Origin.INFERRED, evidence=None, field="mood")
    subject_id = kept.subject_id
    ledger.approve_change(ApproveChange("acme", subject_id, kept.change_id, "rev-1"))
    ledger.reject_change(RejectChange("acme", subject_id, rejected.change_id, REVIEWER, "guess"))
    ledger.forget_memory(ForgetMemory("acme", subject_id, "mem-1", REVIEWER, "asked"))
    # A second ledger on the same store decodes the stored events (POPO stores are private to
    # their ledger, whose repository has no cache: each get() decodes the stored events too).
    with open_ledger(ledger_store) if ledger_store.shared else nullcontext(ledger) as reader:
        stored = reader.subject("acme", subject_id)
    assert stored.fields["budget"].value == MoneyValue(Decimal("9.5"), "EUR")
    assert stored.fields["budget"].confirmed_by == REVIEWER
    assert stored.changes[rejected.change_id].status is ChangeStatus.REJECTED
    assert stored.forgotten_memories == {"mem-1"}
    assert stored.sessions["s1"].messages[1] == (Role.SUBJECT, "We use Supplier A.")
    assert stored.version == 7


def test_recording_a_session_twice_adds_one_event(ledger: Ledger) -> None:
    register(ledger)
    record(ledger)
    record(ledger)
    assert ledger.subject("acme", ledger.subject_id_for("acme", "lead", "lead-42")).version == 2


def test_a_retried_command_is_applied_once(ledger: Ledger) -> None:
    register(ledger)
    record(ledger)
    cmd = propose(ledger)
    again = ledger.propose_change(cmd)
    approve = ApproveChange("acme", cmd.subject_id, cmd.change_id, "rev-1")
    first, second = ledger.approve_change(approve), ledger.approve_change(approve)
    assert not again.applied
    assert (first.applied, first.profile_version) == (True, 1)
    assert (second.applied, second.profile_version) == (False, 1)
    assert ledger.subject("acme", cmd.subject_id).version == 4


def test_a_new_command_on_a_decided_change_is_refused(ledger: Ledger) -> None:
    register(ledger)
    record(ledger)
    cmd = propose(ledger)
    ledger.approve_change(ApproveChange("acme", cmd.subject_id, cmd.change_id, "rev-1"))
    with pytest.raises(ChangeNotPendingError):
        ledger.approve_change(ApproveChange("acme", cmd.subject_id, cmd.change_id, "rev-1"))


def test_the_subject_confirms_with_a_quote(ledger: Ledger, clock: ManualClock) -> None:
    register(ledger)
    record(ledger)
    cmd = propose(ledger)
    said = datetime(2026, 1, 11, 16, 30, tzinfo=UTC)
    record(ledger, "s2", "Yes, still Supplier A.", said)
    clock.set(datetime(2026, 2, 1, 9, 0, tzinfo=UTC))  # the ledger records it weeks later
    result = ledger.confirm_change(
        ConfirmChange("acme", cmd.subject_id, cmd.change_id, Evidence("s2", 1, "Yes"))
    )
    field = ledger.subject("acme", cmd.subject_id).fields["supplier"]
    assert result.profile_version == 1
    # named by its id, never by its reference: the reference is shredded with the subject
    assert field.confirmed_by == Actor(ActorKind.SUBJECT, str(cmd.subject_id))
    # dated by the conversation in which the subject confirmed, not by the ledger's clock
    assert field.confirmed_at == said


def test_a_model_cannot_reject(ledger: Ledger) -> None:
    register(ledger)
    record(ledger)
    cmd = propose(ledger)
    with pytest.raises(ConfirmationNotAllowedError):
        ledger.reject_change(RejectChange("acme", cmd.subject_id, cmd.change_id, MODEL, "no"))


def test_another_tenant_cannot_see_the_subject(ledger: Ledger) -> None:
    register(ledger)
    subject_id = ledger.subject_id_for("acme", "lead", "lead-42")
    with pytest.raises(NotFoundError):
        ledger.subject("globex", subject_id)
    with pytest.raises(NotFoundError):
        propose(ledger, tenant="globex")


def test_an_unknown_subject_is_not_found(ledger: Ledger) -> None:
    with pytest.raises(NotFoundError):
        ledger.subject("acme", uuid4())


def test_positions_grow_with_each_event(ledger: Ledger) -> None:
    first = ledger.register_subject(RegisterSubject("acme", "lead", "a"))
    second = ledger.register_subject(RegisterSubject("acme", "lead", "b"))
    assert (first.position or 0) > 0
    assert (second.position or 0) > (first.position or 0)
