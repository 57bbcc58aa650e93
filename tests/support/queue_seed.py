"""A tenant's review queue at a size where filters, pages and groups matter, through the ledger's
own commands: `n` subjects, each with one recorded call in which they named their supplier,
and two pending proposals each (the supplier they stated, and the same inference about every
one of them: "price is an important factor"). Half are leads, half customers; their calls
are sales or support calls; every tenth subject also has a budget proposal."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID, uuid5

from factledger.api.bootstrap.runtime import Runtime
from factledger.application.ledger.commands import ProposeChange, RecordSession, RegisterSubject
from factledger.application.review_queue.ports import ItemRow
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

_IDS = UUID("0e2a5f8e-5a4b-4d8c-9a51-2f7d3c1b6e90")
MODEL = Actor(ActorKind.MODEL, "extractor-v1")
AGENT = Actor(ActorKind.AGENT, "agent-7")
INFERENCE = "price is an important factor"


@dataclass(frozen=True, slots=True)
class SeededQueue:
    tenant: str
    subjects: list[UUID]
    said_at: datetime  # when the first subject's call took place (months before the import)


def ref_of(i: int) -> str:
    return f"crm-{i:04d}"


def kind_of(i: int) -> str:
    return "lead" if i % 2 == 0 else "customer"


def seed_many(ports: Runtime, clock: ManualClock, *, n: int, tenant: str = "t1") -> SeededQueue:
    """Calls dated from `said_at` a day apart; the proposals recorded "now" (an import)."""
    ledger, imported_at = ports.ledger, clock.now()
    said_at = imported_at - timedelta(days=400)
    subjects = []
    for i in range(n):
        sid = ledger.register_subject(RegisterSubject(tenant, kind_of(i), ref_of(i))).subject_id
        subjects.append(sid)
        at = said_at + timedelta(days=i)
        supplier = f"We buy from Supplier {'ABC'[i % 3]} today."
        session = f"call-{i:04d}"
        ledger.record_session(
            RecordSession(
                tenant,
                sid,
                session,
                Channel.VOICE,
                started_at=at,
                ended_at=at + timedelta(minutes=20),
                transcript=(
                    Message(Role.AGENT, "Who supplies you?", at),
                    Message(Role.SUBJECT, supplier, at),
                ),
                conversation_type="sales-call" if i % 4 else "support-call",
            )
        )
        proposals = [
            ProposeChange(
                tenant,
                sid,
                "supplier",
                Operation.SET,
                TextValue(f"Supplier {'ABC'[i % 3]}"),
                Origin.STATED,
                AGENT,
                0,
                evidence=Evidence(session, 1, supplier),
                change_id=uuid5(_IDS, f"{tenant}:{i}:supplier"),
            ),
            ProposeChange(
                tenant,
                sid,
                "insights",
                Operation.SET,
                TextValue(INFERENCE),
                Origin.INFERRED,
                MODEL,
                0,
                rationale="asked twice about prices",
                change_id=uuid5(_IDS, f"{tenant}:{i}:insights"),
            ),
        ]
        if i % 10 == 0:
            proposals.append(
                ProposeChange(
                    tenant,
                    sid,
                    "budget",
                    Operation.SET,
                    TextValue("40k a year"),
                    Origin.INFERRED,
                    MODEL,
                    0,
                    change_id=uuid5(_IDS, f"{tenant}:{i}:budget"),
                )
            )
        for proposal in proposals:
            ledger.propose_change(proposal)
    ports.catch_up()
    return SeededQueue(tenant, subjects, said_at)


def item_row(n: int, field: str) -> ItemRow:
    """A queue store's row `n` (subject `s-n`, change `c-n`) of tenant t1, for store tests;
    the field "rare" is in group "g", every other in "h"."""
    return ItemRow(
        tenant="t1",
        position=n,
        subject_id=f"s-{n}",
        change_id=f"c-{n}",
        field=field,
        origin="inferred",
        proposer="model:m",
        proposed_key=f"2026010{1 + n % 9}T000000000000",
        kind="lead",
        external_ref=f"ref-{n}",
        group_key="g" if field == "rare" else "h",
        session_id=None,
        said_at=None,
        conversation_type=None,
        doc={"field": field},
    )
