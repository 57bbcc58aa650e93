"""`open_runtime` opens the parts a process needs and leaves the others out."""

from __future__ import annotations

from pathlib import Path

from factledger.api.bootstrap.compose import open_ledger_runtime, open_runtime
from factledger.api.bootstrap.runtime import API, WORKER
from factledger.api.settings import Settings, load_settings


def in_memory(data_dir: Path) -> Settings:
    return load_settings(
        data_dir=data_dir,
        event_store={"kind": "memory"},
        views={"kind": "memory"},
        short_term={"kind": "memory"},
        embedder={"kind": "hashing"},
    )


async def test_the_api_runtime_has_every_part(tmp_path: Path) -> None:
    async with open_runtime(in_memory(tmp_path), API) as rt:
        parts = (rt.backend, rt.sessions, rt.session_buffer, rt.recall, rt.sync_store)
        assert all(part is not None for part in parts)
        assert rt.sync_worker is not None
        assert rt.idempotency is not None


async def test_the_worker_runtime_has_the_sync_and_no_api_parts(tmp_path: Path) -> None:
    async with open_runtime(in_memory(tmp_path), WORKER) as rt:
        assert rt.backend is not None
        assert rt.sync_store is not None
        assert rt.sync_worker is not None
        assert (rt.sessions, rt.session_buffer, rt.idempotency) == (None, None, None)


def test_the_ledger_runtime_has_the_ledger_and_its_views_only(tmp_path: Path) -> None:
    with open_ledger_runtime(in_memory(tmp_path)) as rt:
        assert rt.catch_up() == 0
        assert (rt.backend, rt.sessions, rt.sync_store, rt.idempotency) == (None,) * 4
