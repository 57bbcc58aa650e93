"""The tenant's event log: in log order, one tenant only, narrowed by kind and type, and a page
that says how far it scanned even when nothing matched."""

from __future__ import annotations

from factledger.application.ledger.commands import ProposeChange, RegisterSubject
from factledger.application.ledger.event_log import TOPIC_BY_TYPE, TenantEventLog
from factledger.application.ledger.ledger import Ledger
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import TextValue

AGENT = Actor(ActorKind.AGENT, "voice-bot")


def register(ledger: Ledger, tenant: str, kind: str, ref: str) -> ProposeChange:
    subject_id = ledger.register_subject(RegisterSubject(tenant, kind, ref)).subject_id
    return ProposeChange(
        tenant, subject_id, "supplier", Operation.SET, TextValue("A"), Origin.INFERRED, AGENT, 0
    )


def test_a_page_holds_only_the_tenants_events_in_log_order(ledger: Ledger) -> None:
    ours = register(ledger, "acme", "lead", "crm-1")
    register(ledger, "other", "lead", "crm-1")
    ledger.propose_change(ours)
    page = TenantEventLog(ledger).read("acme", after=0, limit=100)
    assert [(e.type, e.subject_id) for e in page.events] == [
        ("registered", ours.subject_id),
        ("change_proposed", ours.subject_id),
    ]
    assert [e.position for e in page.events] == sorted(e.position for e in page.events)
    assert page.scanned_to == TenantEventLog(ledger).head() == 3
    assert not page.more


def test_kinds_and_types_narrow_the_page(ledger: Ledger) -> None:
    lead = register(ledger, "acme", "lead", "crm-1")
    customer = register(ledger, "acme", "customer", "acct-1")
    ledger.propose_change(lead)
    ledger.propose_change(customer)
    log = TenantEventLog(ledger)
    customers = log.read("acme", after=0, limit=100, kinds=["customer"])
    assert {e.subject_id for e in customers.events} == {customer.subject_id}
    proposals = log.read("acme", after=0, limit=100, types=["change_proposed"])
    assert [e.subject_id for e in proposals.events] == [lead.subject_id, customer.subject_id]


def test_a_full_page_of_other_tenants_still_moves_the_position_on(ledger: Ledger) -> None:
    for n in range(3):
        register(ledger, "other", "lead", f"crm-{n}")
    ours = register(ledger, "acme", "lead", "crm-9")
    log = TenantEventLog(ledger)
    first = log.read("acme", after=0, limit=2)
    assert (first.events, first.scanned_to, first.more) == ([], 2, True)
    second = log.read("acme", after=first.scanned_to, limit=2)
    assert [e.subject_id for e in second.events] == [ours.subject_id]


def test_every_event_type_of_the_subject_has_a_public_name() -> None:
    assert len(TOPIC_BY_TYPE) == len(set(TOPIC_BY_TYPE.values())) == 11
    assert all(topic.startswith("factledger.subject.") for topic in TOPIC_BY_TYPE.values())
