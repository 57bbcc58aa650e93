"""On the embedded default (SQLite ledger and views), old events carrying a lone surrogate
or a NUL project with those characters replaced by U+FFFD, so the views hand every reader
text it can encode (they used to keep the characters, and each reader failed on them)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.adapters.sqlite.view_store import SqliteViewStore
from factledger.application.ledger.commands import (
    ApproveChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.domain import proposal, sessions
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.profile.reader import ViewStoreProfileReader
from factledger.testing.manual_clock import ManualClock

JAN = datetime(2026, 1, 14, 10, tzinfo=UTC)


def test_old_bad_text_projects_into_sqlite_views(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger(
        sqlite_env(tmp_path / "ledger.sqlite"), clock=ManualClock(JAN), keys=InMemoryKeyStore()
    )
    ledger.register_subject(RegisterSubject("t1", "lead", "crm-1"))
    subject_id = ledger.subject_id_for("t1", "lead", "crm-1")
    with monkeypatch.context() as old_code:
        old_code.setattr(sessions, "check_session_text", lambda _: None)
        old_code.setattr(proposal, "check_text", lambda *_: None)
        ledger.record_session(
            RecordSession(
                tenant="t1",
                subject_id=subject_id,
                session_id="wa-1",
                channel=Channel.CHAT,
                started_at=JAN,
                ended_at=JAN,
                transcript=(Message(Role.SUBJECT, "hi\x00", JAN),),
                summary={"topic": "x\udfff"},
            )
        )
        change = ProposeChange(
            tenant="t1",
            subject_id=subject_id,
            field="supplier",
            operation=Operation.SET,
            value=TextValue("Supplier \udfffA"),
            origin=Origin.INFERRED,
            proposed_by=Actor(ActorKind.STAFF, "staff-1"),
            based_on_version=0,
            condition="if\x00",
        )
        ledger.propose_change(change)
        ledger.approve_change(ApproveChange("t1", subject_id, change.change_id, "staff-1"))
    views = SqliteViewStore(tmp_path / "views.sqlite", "profile")
    follower = Follower(ledger, [ProfileProjection(views)])

    follower.catch_up()

    profile = ViewStoreProfileReader(views).current("t1", subject_id)
    assert profile is not None
    field = profile.fields["supplier"]
    assert field.value == TextValue("Supplier \ufffdA")
    assert field.condition == "if\ufffd"
    ledger.close()
