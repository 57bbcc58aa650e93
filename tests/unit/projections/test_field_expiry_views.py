"""A field's expiry in the profile views: on the current profile and in the field's history,
kept through a rebuild; written versions never change, and the next change clears it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from support.store_kinds import Projected

from factledger.application.ledger.commands import (
    ApproveChange,
    ExpireField,
    ProposeChange,
)
from factledger.application.ledger.ports import ViewStore
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import TextValue
from factledger.projections.follower import read_events
from factledger.projections.profile.projection import ProfileProjection
from factledger.testing.story.script import JULY, TENANT

UNTIL = JULY + timedelta(days=90)
OPS = Actor(ActorKind.STAFF, "ops-1")


def expire_supplier(projected: Projected) -> None:
    sid = projected.ids.subject_id
    projected.ledger.expire_field(ExpireField(TENANT, sid, "supplier", UNTIL, OPS, "ticket-9"))
    projected.follower.catch_up()


def test_the_current_profile_and_the_history_record_the_expiry(projected: Projected) -> None:
    reader, sid = projected.reader, projected.ids.subject_id
    version_before = reader.version(TENANT, sid, 5)

    expire_supplier(projected)

    current = reader.current(TENANT, sid)
    assert current.version == 5  # no new version: the value did not change
    assert current.fields["supplier"].valid_until == UNTIL
    assert current.fields["supplier"].display == "Supplier B"
    assert current.fields["purchase_intent"].valid_until is None
    assert reader.version(TENANT, sid, 5) == version_before
    history = reader.history(TENANT, sid, "supplier")
    assert [(h.kind, h.display, h.valid_until, h.until) for h in history[-2:]] == [
        ("set", "Supplier B", None, None),
        ("expiry", None, UNTIL, None),
    ]
    assert history[-1].reason == "ticket-9"
    assert history[-1].confirmed_by == OPS


def test_a_rebuild_after_an_expiry_equals_the_live_views(
    projected: Projected, store_factory: Callable[[], ViewStore]
) -> None:
    expire_supplier(projected)
    live = projected.projection.dump()

    projected.projection.rebuild(projected.ledger)
    fresh = ProfileProjection(store_factory())
    fresh.process(read_events(projected.ledger, after=0, limit=10_000))

    assert projected.projection.dump() == live
    assert fresh.dump() == live


def test_the_next_confirmed_change_clears_the_expiry_and_closes_its_entry(
    projected: Projected,
) -> None:
    reader, sid, ledger = projected.reader, projected.ids.subject_id, projected.ledger
    expire_supplier(projected)
    cmd = ProposeChange(
        TENANT,
        sid,
        "supplier",
        Operation.SET,
        TextValue("Supplier C"),
        Origin.INFERRED,
        Actor(ActorKind.MODEL, "m"),
        ledger.subject(TENANT, sid).profile_version,
    )
    ledger.propose_change(cmd)
    ledger.approve_change(ApproveChange(TENANT, sid, cmd.change_id, "rev"))
    projected.follower.catch_up()

    supplier = reader.current(TENANT, sid).fields["supplier"]
    assert (supplier.display, supplier.valid_until) == ("Supplier C", None)
    expiry = [h for h in reader.history(TENANT, sid, "supplier") if h.kind == "expiry"]
    assert [(h.valid_until, h.until_version) for h in expiry] == [(UNTIL, 6)]
