"""A lead who says things in sessions of their own, one day apart, and the changes proposed
from them, followed into a profile projection (the views after a forget of some kind)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

from support.store_kinds import followed_ledger

from factledger.application.ledger.commands import ProposeChange, RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import ViewStore
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import FieldValue
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.testing.manual_clock import ManualClock

TENANT = "acme"
MODEL = Actor(ActorKind.MODEL, "m")
DAY = timedelta(days=1)


@dataclass
class ToldLead:
    ledger: Ledger
    clock: ManualClock
    projection: ProfileProjection
    follower: Follower
    sid: UUID

    def said(self, session_id: str, text: str) -> Evidence:
        """The lead says `text` a day later, after the agent's question: its evidence."""
        self.clock.advance(DAY)
        at = self.clock.now()
        lines = (Message(Role.AGENT, "Anything else?", at), Message(Role.SUBJECT, text, at))
        self.ledger.record_session(
            RecordSession(TENANT, self.sid, session_id, Channel.CHAT, at, at, lines)
        )
        return Evidence(session_id, 1, text)

    def proposed(
        self, field: str, operation: Operation, value: FieldValue | None, quote: Evidence
    ) -> UUID:
        version = self.ledger.subject(TENANT, self.sid).profile_version
        cmd = ProposeChange(
            TENANT, self.sid, field, operation, value, Origin.STATED, MODEL, version,
            evidence=quote,
        )  # fmt: skip
        self.ledger.propose_change(cmd)
        return cmd.change_id


@contextmanager
def told_lead(store: ViewStore) -> Iterator[ToldLead]:
    with followed_ledger(store) as f:
        sid = f.ledger.register_subject(RegisterSubject(TENANT, "lead", "lead-9")).subject_id
        yield ToldLead(f.ledger, f.clock, f.projection, f.follower, sid)
