"""Issue 34, class 3: a session's fingerprint confirms no guess. New sessions are fingerprinted
with an HMAC under the subject's own key, which erasure deletes; sessions fingerprinted before
(a plain SHA-256 of their words) still compare, so a retried import of either is one session
and a changed one is refused. On the embedded default (SQLite files) and on PostgreSQL +
pgvector, through `POST /v1/import`, the event pages, the stream and webhooks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from support.forgotten_words import (
    ADMIN,
    BACKENDS,
    SERVICE,
    backend_settings,
    client,
    imported,
    ok,
    replayed,
    serving,
    stored_sessions,
    stream,
)
from support.older_sealing import unkeyed_fingerprint

from factledger.adapters.sqlite.delivery_log import SqliteDeliveryLog
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.settings import PostgresEventStoreSettings, Settings
from factledger.application.ledger.cipher import fingerprint_scope
from factledger.application.ledger.event_log import TenantEventLog
from factledger.application.webhooks.dispatch import Endpoint, WebhookDispatcher
from factledger.domain.sessions import BEFORE_KEYS, KEYED_FINGERPRINT, FingerprintKey
from factledger.domain.subject import Subject
from factledger.testing.manual_clock import ManualClock

from .test_old_promises_on_both_stores import files_holding, tables_holding

SAID = ["Our budget is forty thousand euros.", "We buy from Lantern Quarry."]
CHANGED = ["Our budget is fifty thousand euros.", "We buy from Lantern Quarry."]


@pytest.fixture(params=BACKENDS)
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    return backend_settings(request, tmp_path)


def stored_anywhere(settings: Settings, needle: str) -> list[str]:
    """Where the store (every file of the data folder, or every table of the test's schemas)
    holds `needle`."""
    found = files_holding(settings.data_dir, needle)
    if isinstance(settings.event_store, PostgresEventStoreSettings):
        found += tables_holding(settings, needle)
    return found


class Receivers:
    def __init__(self) -> None:
        self.bodies: list[str] = []

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], *, timeout_s: float
    ) -> int:
        self.bodies.append(body.decode())
        return 204


async def webhook_bodies(rt: Runtime, tmp_path: Path) -> str:
    """Everything a content webhook and a content-free one receive of the tenant's log."""
    receivers = Receivers()
    hooks = [
        Endpoint(name, "t1", f"https://hooks.invalid/{name}", b"s" * 32, content=content)
        for name, content in (("full", True), ("bare", False))
    ]
    log = SqliteDeliveryLog(tmp_path / "hooks.sqlite")
    dispatcher = WebhookDispatcher(
        hooks, events=TenantEventLog(rt.ledger), log=log, sender=receivers, clock=ManualClock()
    )
    try:
        for _ in range(100):
            if await dispatcher.run_once() == 0:
                break
    finally:
        log.close()
    assert receivers.bodies
    return "\n".join(receivers.bodies)


async def outward(http: httpx.AsyncClient, api: str, rt: Runtime, sid: str, tmp: Path) -> str:
    """Every way the subject's events leave the service: its event pages, the stream read from
    the start, the replay's encoding and the webhooks."""
    pages = await ok(await http.get(f"/v1/subjects/{sid}/events?limit=500", headers=ADMIN))
    streamed = await stream(api, len(pages["events"]))
    return "\n".join(
        (json.dumps(pages), json.dumps(streamed), replayed(rt), await webhook_bodies(rt, tmp))
    )


async def test_a_session_is_fingerprinted_under_a_key_that_erasure_deletes(
    settings: Settings, tmp_path: Path
) -> None:
    async with serving(settings) as (api, rt), client(api) as http:
        sid = await imported(http, "crm-keyed", "imp-1", SAID)
        again = await import_report(http, "crm-keyed", "imp-1", SAID)  # a retried import
        assert (again["sessions"], again["unchanged"], again["errors"]) == (0, 1, []), again
        [recorded] = stored_sessions(rt, sid)
        guessed = unkeyed_fingerprint(recorded)  # what a guesser of the words can compute
        assert recorded.fingerprint.startswith(KEYED_FINGERPRINT)
        assert guessed not in recorded.fingerprint
        # A changed session under the same id is refused, and recorded nowhere.
        changed = await import_report(http, "crm-keyed", "imp-1", CHANGED)
        assert changed["sessions"] == 0
        assert [e["field"] for e in changed["errors"]], changed
        assert len(stored_sessions(rt, sid)) == 1

        assert guessed not in await outward(http, api, rt, sid, tmp_path)
        assert recorded.fingerprint.removeprefix(KEYED_FINGERPRINT) not in replayed(rt)
        assert stored_anywhere(settings, guessed) == []

        key = rt.ledger.keys.live(fingerprint_scope(UUID(sid)))
        assert key is not None
        body = {"reason": "the subject asked"}
        await ok(await http.request("DELETE", f"/v1/subjects/{sid}", json=body, headers=ADMIN))
        # The key is gone: the fingerprint can be neither read nor computed again.
        assert rt.ledger.keys.live(fingerprint_scope(UUID(sid))) is None
        assert rt.ledger.keys.key(key[0]) is None
        rt.ledger.mapper.forget_cached()  # type: ignore[attr-defined]
        assert [s.fingerprint for s in stored_sessions(rt, sid)] == [None]
        assert guessed not in await outward(http, api, rt, sid, tmp_path)
    assert stored_anywhere(settings, guessed) == []
    assert stored_anywhere(settings, recorded.fingerprint) == []


async def test_a_session_fingerprinted_before_keys_is_still_one_session_on_retry(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with serving(settings) as (api, rt), client(api) as http:
        # Recorded as the ledger did before keyed fingerprints: unkeyed, asked for by name.
        with monkeypatch.context() as before:

            def no_key(subject: Subject, session: object = None) -> FingerprintKey:
                return BEFORE_KEYS

            before.setattr(rt.ledger, "fingerprint_key", no_key)
            sid = await imported(http, "crm-older", "imp-old", SAID)
        [recorded] = stored_sessions(rt, sid)
        assert recorded.fingerprint == unkeyed_fingerprint(recorded)

        again = await import_report(http, "crm-older", "imp-old", SAID)
        assert (again["sessions"], again["unchanged"], again["errors"]) == (0, 1, []), again
        changed = await import_report(http, "crm-older", "imp-old", CHANGED)
        assert changed["sessions"] == 0
        assert changed["errors"], changed
        [still] = stored_sessions(rt, sid)
        assert still.fingerprint == recorded.fingerprint  # the old one, unchanged
        # A new session of the same subject is keyed.
        await import_report(http, "crm-older", "imp-new", CHANGED)
        fingerprints = sorted(str(s.fingerprint) for s in stored_sessions(rt, sid))
        assert fingerprints[1].startswith(KEYED_FINGERPRINT)


async def import_report(
    http: httpx.AsyncClient, ref: str, session: str, lines: list[str]
) -> dict[str, Any]:
    """The report of importing `lines` as the past session `session` of an existing subject."""
    messages = [
        {"role": "subject", "text": text, "at": f"2026-02-02T09:00:{30 * n:02d}+00:00"}
        for n, text in enumerate(lines)
    ]
    history = {
        "type": "session",
        "subject": {"kind": "lead", "ref": ref},
        "session_id": session,
        "channel": "whatsapp",
        "started_at": "2026-02-02T09:00:00+00:00",
        "messages": messages,
    }
    headers = {**SERVICE, "content-type": "application/x-ndjson"}
    report: dict[str, Any] = await ok(
        await http.post("/v1/import", content=json.dumps(history) + "\n", headers=headers)
    )
    return report
