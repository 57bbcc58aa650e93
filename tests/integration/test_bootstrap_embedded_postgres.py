"""Bootstrap with PostgreSQL chosen and no `DATABASE_URL`: it starts the embedded server under
`<data_dir>/pg` itself, runs every PostgreSQL-backed part on it, and stops it on exit."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.settings import Settings, load_settings
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

AT = datetime(2026, 3, 3, 15, 0, tzinfo=UTC)


def postgres_settings(data_dir: Path) -> Settings:
    return load_settings(
        data_dir=data_dir,
        event_store={"kind": "postgres"},
        views={"kind": "postgres"},
        short_term={"kind": "postgres"},
        sync={"store": {"kind": "postgres"}},
        embedder={"kind": "hashing"},
    )


@pytest.mark.integration
async def test_bootstrap_starts_and_stops_its_own_embedded_postgres(
    server_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DATABASE_URL", "FACTLEDGER_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = postgres_settings(server_dir)
    assert settings.database_url is None
    clock = ManualClock(AT)

    # Given no database URL, when the service boots and a session is recorded through it
    async with open_runtime(settings, clock=clock) as rt:
        subject_id = rt.ledger.register_subject(RegisterSubject("acme", "lead", "l-1")).subject_id
        session = SessionKey(subject_id, SessionId("call-1"))
        await rt.sessions.start(subject_id, session.session_id, Channel.VOICE)
        await rt.sessions.add_message(session, Message(Role.SUBJECT, "We now use Supplier B.", AT))
        await rt.sessions.end(session)
        rt.follower.catch_up()
        assert [s.session_id for s in rt.profiles.sessions("acme", subject_id)] == ["call-1"]
        assert await rt.sync_store.pending_count() == 0  # nothing fed: workers run apart
        pgdata = server_dir / "pg"
        assert (pgdata / "postmaster.pid").exists()

    # Then the server it started is stopped on exit, its data kept under the data dir
    assert not (pgdata / "postmaster.pid").exists()
    assert (pgdata / "PG_VERSION").exists()

    # And a second boot finds the recorded session again
    async with open_runtime(postgres_settings(server_dir), clock=clock) as again:
        again.follower.catch_up()
        sessions = again.profiles.sessions("acme", subject_id)
        assert [(s.session_id, s.message_count) for s in sessions] == [("call-1", 1)]
        subject = again.ledger.subject("acme", subject_id)
        assert [text for _, text in subject.sessions["call-1"].messages] == [
            "We now use Supplier B."
        ]
    assert not (pgdata / "postmaster.pid").exists()
