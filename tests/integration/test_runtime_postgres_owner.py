"""One owner per embedded PostgreSQL: a runtime starts the server once, however many of its
parts live there, and stops it once, after every part is closed; closing a part never stops
it under the others."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres.sync_store import PostgresSyncStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.api.bootstrap.backend import open_configured_backend
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.ledger import open_ledger
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.bootstrap.runtime import Needs
from factledger.api.bootstrap.services import open_services
from factledger.api.settings import Settings, load_settings
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.forwarding import innermost_backend
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

pytestmark = pytest.mark.integration

AT = datetime(2026, 3, 3, 15, 0, tzinfo=UTC)


def everything_on_postgres(data_dir: Path) -> Settings:
    """Event store (and with it the keys and the idempotency store), views, session buffer,
    sync store and pgvector, all on the embedded server (no `DATABASE_URL`)."""
    return load_settings(
        data_dir=data_dir,
        event_store={"kind": "postgres"},
        views={"kind": "postgres"},
        short_term={"kind": "postgres"},
        sync={"store": {"kind": "postgres"}},
        backend={"kind": "pgvector"},
        embedder={"kind": "hashing"},
    )


@pytest.fixture(autouse=True)
def no_database_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATABASE_URL", "FACTLEDGER_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)


class Journal:
    """What happened to the embedded server and the parts that use it, in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entries: list[str] = []
        start, stop = EmbeddedPostgres.__init__, EmbeddedPostgres.stop

        def started(server: EmbeddedPostgres, *args: Any, **kwargs: Any) -> None:
            self.entries.append("server started")
            start(server, *args, **kwargs)

        def stopped(server: EmbeddedPostgres) -> None:
            self.entries.append("server stopped")
            stop(server)

        monkeypatch.setattr(EmbeddedPostgres, "__init__", started)
        monkeypatch.setattr(EmbeddedPostgres, "stop", stopped)
        for part in (Ledger, PostgresKeyStore, PostgresViewStore):
            monkeypatch.setattr(part, "close", self._closing(part.__name__, part.close))
        for async_part in (
            PostgresSessionBuffer,
            PostgresSyncStore,
            PostgresIdempotencyStore,
            PgvectorMemoryBackend,
        ):
            name, close = async_part.__name__, async_part.close
            monkeypatch.setattr(async_part, "close", self._async_closing(name, close))

    def _closing(self, name: str, close: Callable[[Any], None]) -> Callable[[Any], None]:
        def closing(part: Any) -> None:
            self.entries.append(f"{name} closed")
            close(part)

        return closing

    def _async_closing(
        self, name: str, close: Callable[[Any], Coroutine[Any, Any, None]]
    ) -> Callable[[Any], Coroutine[Any, Any, None]]:
        async def closing(part: Any) -> None:
            self.entries.append(f"{name} closed")
            await close(part)

        return closing


async def test_one_server_serves_every_part_and_stops_after_them(
    server_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = Journal(monkeypatch)

    # Given a runtime with every PostgreSQL-capable part on the embedded server
    async with open_runtime(everything_on_postgres(server_dir), clock=ManualClock(AT)) as rt:
        assert isinstance(innermost_backend(rt.backend), PgvectorMemoryBackend)
        assert isinstance(rt.session_buffer, PostgresSessionBuffer)
        assert isinstance(rt.sync_store, PostgresSyncStore)
        assert isinstance(rt.idempotency, PostgresIdempotencyStore)
        assert isinstance(rt.views, PostgresViewStore)
        assert isinstance(rt.ledger.keys, PostgresKeyStore)
        assert rt.sessions is not None
        # When each part is used
        subject_id = rt.ledger.register_subject(RegisterSubject("acme", "lead", "l-1")).subject_id
        session = SessionKey(subject_id, SessionId("call-1"))
        await rt.sessions.start(subject_id, session.session_id, Channel.VOICE)
        await rt.sessions.add_message(session, Message(Role.SUBJECT, "Supplier B now.", AT))
        await rt.sessions.end(session)
        rt.catch_up()
        assert [s.session_id for s in rt.profiles.sessions("acme", subject_id)] == ["call-1"]
        assert (await rt.backend.health()).ok

    # Then one server was started and stopped once, after every part was closed
    assert journal.entries.count("server started") == 1
    assert journal.entries.count("server stopped") == 1
    assert journal.entries[0] == "server started"
    assert journal.entries[-1] == "server stopped"
    closed = {entry for entry in journal.entries if entry.endswith(" closed")}
    assert closed == {
        "Ledger closed",
        "PostgresKeyStore closed",
        "PostgresViewStore closed",
        "PostgresSessionBuffer closed",
        "PostgresSyncStore closed",
        "PostgresIdempotencyStore closed",
        "PgvectorMemoryBackend closed",
    }


async def test_closing_the_memory_services_leaves_the_ledger_working_on_postgres(
    server_dir: Path,
) -> None:
    settings = everything_on_postgres(server_dir)
    clock = ManualClock(AT)
    with (
        PostgresServer(settings) as postgres,
        open_ledger(settings, postgres, clock=clock, catch_up=True) as runtime,
    ):
        # Given the memory services opened on the ledger's server, then closed
        async with AsyncExitStack() as stack:
            backend = await open_configured_backend(settings, clock, postgres, stack)
            services = await open_services(
                replace(runtime, backend=backend),
                settings,
                postgres,
                stack,
                clock=clock,
                needs=Needs(run_sync=False),
            )
            assert services.sync_store is not None
            assert await services.sync_store.pending_count() == 0

        # When the ledger is used after them
        registered = runtime.ledger.register_subject(RegisterSubject("acme", "lead", "l-2"))
        runtime.catch_up()

        # Then it still reads and writes on PostgreSQL
        assert registered.applied
        assert [s.external_ref for s in runtime.profiles.subjects("acme")] == ["l-2"]
        assert (server_dir / "pg" / "postmaster.pid").exists()

    assert not (server_dir / "pg" / "postmaster.pid").exists()
