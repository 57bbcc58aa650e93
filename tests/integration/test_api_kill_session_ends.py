"""Session ends from concurrent clients while an API process is SIGKILLed (ADR 0027, issue 19):
two API processes on PostgreSQL, saves sharing commits; the clients retry with their keys as
the Python client does. Afterwards every session is recorded once with its proposal, each
subject's versions are dense, and every end replays the response it was first given."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from factledger.api.http.auth import Role, SubjectClaim, TokenRequest, mint_token
from factledger.api.settings import AuthSettings, JwtKeySettings
from factledger.bench.load.servers import _children, started
from factledger.client.transport import retry_after_of

pytestmark = [pytest.mark.integration, pytest.mark.slow]
TENANT = "acme"
CLIENTS, SESSIONS_EACH = 8, 6
KILL_AFTER_ENDS = 12
RETRY_FOR_S = 90.0


class Auth:
    def __init__(self) -> None:
        secret = secrets.token_urlsafe(32)
        self.settings = AuthSettings(
            environment="test",
            issuer="kill-test",
            keys=(JwtKeySettings(kid="k", secret=SecretStr(secret)),),
        )
        self.server_env = {
            "FACTLEDGER_AUTH__ENVIRONMENT": "test",
            "FACTLEDGER_AUTH__ISSUER": "kill-test",
            "FACTLEDGER_AUTH__AUDIENCE": self.settings.audience,
            "FACTLEDGER_AUTH__KEYS": json.dumps([{"kid": "k", "secret": secret}]),
            "FACTLEDGER_API__RATE_LIMIT__ENABLED": "false",
            "FACTLEDGER_EMBEDDER__KIND": "hashing",
        }

    def token(self, role: Role, ref: str | None = None) -> dict[str, str]:
        claim = None if ref is None else SubjectClaim(kind="lead", ref=ref)
        request = TokenRequest(role, TENANT, f"{role.value}-{ref}", claim, timedelta(hours=1))
        return {"Authorization": f"Bearer {mint_token(self.settings, request)}"}


async def send(
    http: httpx.AsyncClient, path: str, body: object, headers: dict[str, str], key: str
) -> httpx.Response:
    """POSTs until answered (2xx, or a 4xx other than 409 and 429), with the same key each
    time; a 429 is waited out for its `Retry-After`: the tenant's share of concurrent writes can
    be full while the survivor takes the killed process's clients, and a caller under load
    retries it."""
    deadline = time.monotonic() + RETRY_FOR_S
    while True:
        wait = 0.2
        try:
            response = await http.post(path, json=body, headers={**headers, "Idempotency-Key": key})
            if response.status_code < 500 and response.status_code not in (409, 429):
                return response
            wait = retry_after_of(response) or wait
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"{path} never answered"
        await asyncio.sleep(wait)


async def client(
    http: httpx.AsyncClient,
    subject: str,
    headers: dict[str, str],
    channel: dict[str, str],
    n: int,
    ends: dict[str, Any],
    reached: asyncio.Event,
) -> None:
    """The agent starts and ends each session; the channel (`channel`, a service token)
    relays the subject's line."""
    base = f"/v1/subjects/{subject}/sessions"
    for s in range(SESSIONS_EACH):
        session_id = f"k-{n}-{s}"
        started_ok = await send(
            http, base, {"session_id": session_id, "channel": "chat"}, headers, f"start-{n}-{s}x"
        )
        assert started_ok.status_code in (200, 201), started_ok.text
        said = {"role": "subject", "text": "We buy from Acme now.", "message_id": "m-1"}
        appended = await send(
            http, f"{base}/{session_id}/messages", said, channel, f"msg-{n}-{s}xx"
        )
        assert appended.status_code == 200, appended.text
        proposal = {
            "field": "supplier",
            "value": {"type": "text", "value": f"Acme {s}"},
            "origin": "stated",
            "evidence": {"session_id": session_id, "message_index": 0, "quote": "Acme"},
        }
        key = f"end-{n}-{s}-key"
        ended = await send(
            http, f"{base}/{session_id}/end", {"proposals": [proposal]}, headers, key
        )
        assert ended.status_code == 200, ended.text
        ends[key] = (f"{base}/{session_id}/end", {"proposals": [proposal]}, ended.json())
        if len(ends) >= KILL_AFTER_ENDS:
            reached.set()


def uvicorn_workers(supervisor: int) -> list[int]:
    """The API processes `serve --workers 2` started (not its resource tracker)."""
    return [
        pid
        for pid in _children(supervisor)
        if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    ]


async def both_api_processes(supervisor: int, within_s: float = 30.0) -> list[int]:
    """The two API processes, once both are there: the topology is ready as soon as one of
    them answers, and on a loaded machine the second may still be starting."""
    for _ in range(int(within_s / 0.1)):
        found = uvicorn_workers(supervisor)
        if len(found) >= 2:
            return found
        await asyncio.sleep(0.1)
    return uvicorn_workers(supervisor)


def server_story(server_dir: Path) -> str:
    """What the servers logged of their processes and their failures (never a body): printed
    when the test fails, since the folder goes with it."""
    words = ("process", "startup", "error", "warning", "failed")
    kept = [
        f"{log.name}: {line[:400]}"
        for log in sorted(server_dir.glob("*.log"))
        for line in log.read_text(errors="replace").splitlines()
        if any(word in line for word in words)
    ]
    return "\n".join(kept[-200:])


async def test_session_ends_survive_a_killed_api_process(server_dir: Path) -> None:
    try:
        await killed_mid_run(server_dir)
    except AssertionError:
        print(server_story(server_dir))  # noqa: T201 - pytest shows it with the failure
        raise


async def killed_mid_run(server_dir: Path) -> None:
    auth = Auth()
    with started("postgres", server_dir, auth.server_env, workers=0) as servers:
        api_children = await both_api_processes(servers.pids[0])
        assert len(api_children) == 2
        service = auth.token(Role.SERVICE)
        async with httpx.AsyncClient(base_url=servers.base_url, timeout=30) as http:
            subjects = []
            for n in range(CLIENTS):
                body = {"kind": "lead", "external_ref": f"lead-{n}"}
                response = await send(http, "/v1/subjects", body, service, f"register-{n}-key")
                subjects.append(str(response.json()["subject_id"]))
            ends: dict[str, Any] = {}

            reached = asyncio.Event()

            async def killer() -> None:
                await reached.wait()
                os.kill(api_children[0], signal.SIGKILL)

            kill = asyncio.create_task(killer())
            await asyncio.gather(
                *(
                    client(
                        http,
                        subjects[n],
                        auth.token(Role.AGENT, f"lead-{n}"),
                        service,
                        n,
                        ends,
                        reached,
                    )
                    for n in range(CLIENTS)
                )
            )
            await kill
            assert len(ends) == CLIENTS * SESSIONS_EACH

            analyst = auth.token(Role.ANALYST)
            for n, subject in enumerate(subjects):
                page = (
                    await http.get(
                        f"/v1/subjects/{subject}/events", headers=analyst, params={"limit": 500}
                    )
                ).json()
                versions = [e["version"] for e in page["events"]]
                assert versions == list(range(1, len(versions) + 1)), n
                topics = [e["topic"] for e in page["events"]]
                assert topics.count("factledger.subject.session_recorded.v1") == SESSIONS_EACH
                assert topics.count("factledger.subject.change_proposed.v1") == SESSIONS_EACH

            # Every end, sent again with its key, replays what it first answered.
            for n in range(CLIENTS):
                headers = auth.token(Role.AGENT, f"lead-{n}")
                for s in range(SESSIONS_EACH):
                    key = f"end-{n}-{s}-key"
                    path, body, first = ends[key]
                    again = await send(http, path, body, headers, key)
                    assert again.status_code == 200
                    assert again.headers.get("Idempotent-Replayed") == "true"
                    assert again.json() == first
