"""Ingest to searchable: from a session end's answer to the first recall that finds the
session's fact as a memory (a note the memory backend gave, not the ledger's excerpts)."""

from __future__ import annotations

import asyncio
import time

import httpx

from factledger.bench.load.agent import Sample

POLL_S = 0.01
GIVE_UP_S = 5.0


async def one_session(
    http: httpx.AsyncClient, subject: str, token: str, n: int, *, by_name: bool = False
) -> Sample:
    """`by_name`: the recall asks for the supplier's name rather than the question (pgvector's
    memories mode does not rank "works with ..." above its threshold for the question)."""
    headers = {"Authorization": f"Bearer {token}"}
    base = f"/v1/subjects/{subject}/sessions"
    session_id = f"ingest-{n}"
    name = f"Zorblax{n}"
    start = {"session_id": session_id, "channel": "chat"}
    (await http.post(base, json=start, headers=headers)).raise_for_status()
    said = {"role": "subject", "text": f"We now buy our flour from {name}."}
    (
        await http.post(f"{base}/{session_id}/messages", json=said, headers=headers)
    ).raise_for_status()
    (await http.post(f"{base}/{session_id}/end", json={}, headers=headers)).raise_for_status()
    ended = time.perf_counter()
    query = {"query": name if by_name else "which supplier do they buy flour from?"}
    while time.perf_counter() - ended < GIVE_UP_S:
        response = await http.post(f"/v1/subjects/{subject}/recall", json=query, headers=headers)
        notes = response.json().get("notes", []) if response.is_success else []
        if any(note["kind"] == "memory" and name in note["text"] for note in notes):
            return Sample("searchable", 200, time.perf_counter() - ended)
        await asyncio.sleep(POLL_S)
    return Sample("searchable", 0, GIVE_UP_S, error="not found")
