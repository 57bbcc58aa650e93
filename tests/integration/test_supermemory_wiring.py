"""Settings with `backend.kind = "supermemory"` open our adapter, wired to the configured API.

The local server runs under uvicorn on loopback; the service's own composition code
(`api.bootstrap.backend.open_backend`) builds the backend from `Settings`, as `serve` does.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from datetime import UTC, datetime

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.supermemory.backend import SupermemoryMemoryBackend
from factledger.api.bootstrap.backend import open_backend
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import Settings, SettingsError, load_settings
from factledger.application.memory.forwarding import innermost_backend
from factledger.application.memory.types import (
    HitKind,
    Namespace,
    ProcessingState,
    SearchMode,
    SearchQuery,
)
from factledger.domain.transcript import Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.supermemory.server import SupermemoryServer, serve_on_loopback


async def test_supermemory_settings_open_a_working_adapter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = SupermemoryServer(RuleExtractor(), HashingEmbedder(256), api_key="sm-wiring-key")
    with serve_on_loopback(server.app) as base_url:
        monkeypatch.setenv("FACTLEDGER_BACKEND__KIND", "supermemory")
        monkeypatch.setenv("FACTLEDGER_BACKEND__BASE_URL", base_url)
        monkeypatch.setenv("FACTLEDGER_BACKEND__API_KEY", "sm-wiring-key")
        monkeypatch.setenv("FACTLEDGER_BACKEND__TIMEOUT_S", "5")
        settings: Settings = load_settings()
        async with AsyncExitStack() as stack:
            postgres = stack.enter_context(PostgresServer(settings))  # never started here
            embedder = HashingEmbedder(256)
            backend = await open_backend(settings, embedder, ManualClock(), postgres, stack)
            ns = Namespace("subject-7")
            transcript = [Message(Role.SUBJECT, "I moved to Porto last month.")]
            status = await backend.ingest_transcript(
                ns, "s-1", transcript, occurred_at=datetime(2026, 4, 1, tzinfo=UTC)
            )
            await backend.put_record(ns, "profile-7", "profile", '{"city": "Porto"}')
            chunks = await backend.search(
                ns, SearchQuery("city Porto", mode=SearchMode.CHUNKS, threshold=0.0)
            )
            health = await backend.health()

    assert isinstance(innermost_backend(backend), SupermemoryMemoryBackend)
    assert status.state is ProcessingState.DONE
    assert [(h.kind, h.document_id) for h in chunks] == [(HitKind.CHUNK, "profile-7")]
    assert health.ok
    assert "add" in server.requests


def test_supermemory_settings_need_a_key_and_report_fields_not_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_BACKEND__KIND", "supermemory")
    monkeypatch.setenv("FACTLEDGER_BACKEND__BASE_URL", "not a url with secret-ish-text")

    with pytest.raises(SettingsError) as caught:
        load_settings()

    assert "backend" in str(caught.value)
    assert "secret-ish-text" not in str(caught.value)


@pytest.mark.parametrize("key", ["", "  ", "YOUR_API_KEY", "sm_..."])
def test_an_empty_or_placeholder_supermemory_key_is_refused(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("FACTLEDGER_BACKEND__KIND", "supermemory")
    monkeypatch.setenv("FACTLEDGER_BACKEND__API_KEY", key)

    with pytest.raises(SettingsError, match="backend"):
        load_settings()
