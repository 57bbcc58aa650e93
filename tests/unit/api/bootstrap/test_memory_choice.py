"""`open_backend` honours `settings.extractor`: the self-hosted backend extracts with the
OpenAI-compatible extractor when the settings choose it (against the local fake server)."""

from __future__ import annotations

from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.api.bootstrap.backend import open_backend
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import load_settings
from factledger.application.errors import InvalidMemoryInputError
from factledger.application.memory.types import namespace
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.domain.transcript import Message, Role
from factledger.testing.fake_openai import FakeOpenAI, facts_reply
from factledger.testing.manual_clock import ManualClock

AT = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
SAID = (Message(Role.AGENT, "Who supplies you?", AT), Message(Role.SUBJECT, "Supplier Q.", AT))


async def _extracted(settings_extractor: dict[str, object], fake: FakeOpenAI, tmp: Path) -> str:
    settings = load_settings(data_dir=tmp, extractor=settings_extractor)
    async with AsyncExitStack() as stack:
        http = httpx.AsyncClient(transport=fake.transport())
        stack.push_async_callback(http.aclose)
        postgres = stack.enter_context(PostgresServer(settings))  # never started here
        embedder, clock = HashingEmbedder(64), ManualClock()
        backend = await open_backend(settings, embedder, clock, postgres, stack, http=http)
        ns = namespace("subject-choice")
        await backend.ingest_transcript(ns, "doc-1", SAID, occurred_at=AT)
        return " | ".join(sorted(m.text for m in await backend.list_memories(ns)))


async def test_the_openai_compatible_extractor_setting_is_honoured(tmp_path: Path) -> None:
    # Given settings that choose the OpenAI-compatible extractor, and a model that answers
    fake = FakeOpenAI()
    fake.replies.append(
        facts_reply({"key": "a", "text": "buys from the scripted supplier", "source_indexes": [1]})
    )
    llm = {
        "kind": "openai_compatible",
        "base_url": "http://llm.test/v1",
        "model": "tiny",
        "api_key": "test-key",
    }
    # When a transcript is ingested by the backend `open_backend` built
    texts = await _extracted(llm, fake, tmp_path)
    # Then the model was asked, and its fact (not a rule-based one) is stored
    assert len(fake.requests) == 1
    assert fake.requests[0]["model"] == "tiny"
    assert texts == "buys from the scripted supplier"


async def test_the_default_and_the_rule_extractor_call_no_model(tmp_path: Path) -> None:
    fake = FakeOpenAI()
    for kind in ("learned", "rule"):  # the default (ADR 0119), and the rules alone
        texts = await _extracted({"kind": kind}, fake, tmp_path / kind)
        assert "buys from the scripted supplier" not in texts
    assert fake.requests == []


async def test_the_opened_backend_checks_its_inputs_before_the_adapter(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path)
    async with AsyncExitStack() as stack:
        postgres = stack.enter_context(PostgresServer(settings))  # never started here
        embedder, clock = HashingEmbedder(64), ManualClock()
        backend = await open_backend(settings, embedder, clock, postgres, stack)
        with pytest.raises(InvalidMemoryInputError):
            await backend.ingest_transcript(
                namespace("subject-choice"), "a b", SAID, occurred_at=AT
            )
    assert isinstance(backend, ValidatingMemoryBackend)
