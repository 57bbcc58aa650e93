"""Supermemory specifics of `delete_records`: v5 takes at most 100 ids per `documents.delete`,
and only a per-id "not found" is a missing record; any other per-id failure is an outage."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.application.errors import MemoryUnavailableError
from factledger.application.memory.types import Namespace
from factledger.testing.scripted_extractor import ScriptedExtractor
from factledger.testing.supermemory.harness import supermemory_backend_in_process

NS = Namespace("subject-deletion")


async def test_more_than_one_call_worth_of_ids_is_sent_in_batches() -> None:
    async with supermemory_backend_in_process(ScriptedExtractor(), HashingEmbedder(64)) as (
        backend,
        _server,
    ):
        await backend.put_record(NS, "r-0", "k", '{"n": 0}')
        await backend.put_record(NS, "r-120", "k", '{"n": 120}')
        ids = [f"r-{n}" for n in range(150)]

        # The local server validates requests against the v5 spec (maxItems 100): one call
        # with 150 ids would be refused as invalid input.
        result = await backend.delete_records(NS, ids)

        assert result.forgotten == ("r-0", "r-120")
        assert len(result.missing) == 148
        assert "r-0" not in result.missing


async def test_a_per_id_failure_other_than_not_found_is_an_outage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with supermemory_backend_in_process(ScriptedExtractor(), HashingEmbedder(64)) as (
        backend,
        _server,
    ):

        async def failing(ns: str, ids: list[str], deadline: object) -> Any:
            return SimpleNamespace(count=0, errors=[SimpleNamespace(id=ids[0], error="Internal")])

        monkeypatch.setattr(backend._documents, "_delete", failing)

        with pytest.raises(MemoryUnavailableError):
            await backend.delete_records(NS, ["r-1"])
