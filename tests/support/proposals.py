"""A model's inferred proposal of a text field, the ledger command most tests write."""

from __future__ import annotations

from uuid import UUID

from factledger.application.ledger.commands import ProposeChange
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import TextValue


def inferred(
    subject_id: UUID, field: str, value: str, *, tenant: str = "acme", by: str = "m"
) -> ProposeChange:
    return ProposeChange(
        tenant=tenant,
        subject_id=subject_id,
        field=field,
        operation=Operation.SET,
        value=TextValue(value),
        origin=Origin.INFERRED,
        proposed_by=Actor(ActorKind.MODEL, by),
        based_on_version=0,
    )


def numbered(subject_id: UUID, n: int, *, by: str = "writer") -> ProposeChange:
    """The `n`th of many proposals to one subject, each of a field of its own."""
    return inferred(subject_id, f"field_{n}", f"value {n}", by=by)
