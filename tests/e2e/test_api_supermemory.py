"""The API configured for Supermemory (the local v5 server on loopback): a session recorded over
HTTP reaches the backend through the in-process sync, and recall over HTTP returns it as a
dated note, never a quotation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from support.api_harness import TEST_AUTH, bearer, line, token

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import Settings
from factledger.testing.supermemory.server import (
    DEFAULT_API_KEY,
    SupermemoryServer,
    serve_on_loopback,
)

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-sm"))
SYNC_WAIT_STEPS = 100  # x 0.1 s: the in-process worker polls every 0.5 s by default


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def test_a_session_over_http_is_recalled_from_supermemory(tmp_path: Path) -> None:
    server = SupermemoryServer(RuleExtractor(), HashingEmbedder())
    with serve_on_loopback(server.app) as base_url:
        settings = Settings(
            data_dir=tmp_path,
            event_store={"kind": "memory"},  # type: ignore[arg-type]
            views={"kind": "memory"},  # type: ignore[arg-type]
            short_term={"kind": "memory"},  # type: ignore[arg-type]
            backend={"kind": "supermemory", "base_url": base_url, "api_key": DEFAULT_API_KEY},  # type: ignore[arg-type]
            embedder={"kind": "hashing"},  # type: ignore[arg-type]
            sync={"poll_interval_s": 0.1},  # type: ignore[arg-type]
            # The hashing embedder is lexical: its scores sit below the semantic default 0.55.
            recall={"threshold": 0.1},  # type: ignore[arg-type]
            auth=TEST_AUTH,
        )
        async with open_runtime(settings) as runtime:
            app = create_app(settings, ports=runtime)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
                register = {"kind": "lead", "external_ref": "crm-sm"}
                await ok(await http.post("/v1/subjects", json=register, headers=SERVICE), 201)
                start = {"session_id": "wa-sm-1", "channel": "whatsapp"}
                await ok(
                    await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201
                )
                url = "/v1/subjects/me/sessions/wa-sm-1/messages"
                said = {"role": "subject", "text": "We work with Supplier A for packaging."}
                await ok(await http.post(**line(url, said, AGENT)))
                await ok(
                    await http.post("/v1/subjects/me/sessions/wa-sm-1/end", json={}, headers=AGENT)
                )
                notes: list[dict[str, Any]] = []
                for _ in range(SYNC_WAIT_STEPS):
                    answer = await ok(
                        await http.post(
                            "/v1/subjects/me/recall",
                            json={"query": "which supplier do they work with"},
                            headers=AGENT,
                        )
                    )
                    notes = answer["notes"]
                    if notes:
                        break
                    await asyncio.sleep(0.1)
    assert notes, "the session never became recallable"
    assert any("Supplier A" in note["text"] for note in notes)
    assert all('"' not in note["text"] for note in notes)
    assert notes[0]["channel"] == "whatsapp"
    assert any("search" in operation for operation in server.requests)
