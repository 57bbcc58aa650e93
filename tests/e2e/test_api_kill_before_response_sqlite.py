"""An API process on the embedded default (SQLite) SIGKILLed right after a command's events
committed, before it answered (issue 19, ADR 0037): the client's retry with the same
Idempotency-Key gets the very answer the first request would have given, and the ledger
holds the command once.

The child process approves a proposal over HTTP and dies at the first moment its events are
committed and its answer is known: in the ledger's `after_commit` (where the response was
written with the events) or in the idempotency store's `complete` (where it is saved after
them). It leaves that answer in a file; the parent retries over HTTP on the same data
directory, as a client whose connection dropped does, and compares.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
from support.api_harness import TEST_AUTH, bearer, token

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import Settings

TESTS_DIR = Path(__file__).resolve().parents[1]
LEASE_S = 0.5
KEY = "approve-0000001"
RETRY_FOR_S = 30.0

# Prepares a subject with a pending proposal, then approves it with KEY and dies in the
# window between the events' commit and the answer.
CHILD = """
import asyncio, json, os, signal, sys
from pathlib import Path
import httpx
from support.api_harness import TEST_AUTH, bearer, token
from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import Settings
from factledger.application.ledger.responses import pending_response

data_dir, answer_file, key = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
armed = False

def die_answering(body: object) -> None:
    answer_file.write_text(json.dumps(body))
    os.kill(os.getpid(), signal.SIGKILL)

real_complete = SqliteIdempotencyStore.complete

async def complete(self, scope, fingerprint, body):
    if armed:
        die_answering(body)  # the events are in; the response is not yet saved
    await real_complete(self, scope, fingerprint, body)

SqliteIdempotencyStore.complete = complete

def after_commit() -> None:
    pending = pending_response()
    if armed and pending is not None and pending.body is not None:
        die_answering(pending.body)  # the response committed with the events

async def main() -> None:
    global armed
    settings = Settings(data_dir=data_dir)
    async with open_runtime(settings) as runtime:
        runtime.ledger.after_commit.append(after_commit)
        app = create_app(ports=runtime, auth=TEST_AUTH)
        service = bearer(token(Role.SERVICE))
        agent = bearer(token(Role.AGENT, kind="lead", ref="crash-1", principal_id="bot"))
        reviewer = bearer(token(Role.REVIEWER, principal_id="reviewer-1"))
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
            made = await http.post("/v1/subjects", json={"kind": "lead", "external_ref": "crash-1"},
                                   headers=service)
            assert made.status_code == 201, made.text
            subject_id = made.json()["subject_id"]
            proposal = {"field": "supplier", "value": {"type": "text", "value": "Supplier A"},
                        "origin": "inferred"}
            proposed = await http.post("/v1/subjects/me/proposals", json=proposal, headers=agent)
            assert proposed.status_code in (200, 201, 202), proposed.text
            change_id = proposed.json()["change_id"]
            ids = {"subject_id": subject_id, "change_id": change_id}
            answer_file.with_name("ids.json").write_text(json.dumps(ids))
            armed = True
            await http.post(f"/v1/subjects/{subject_id}/proposals/{change_id}/approve",
                            json={"note": "checked"},
                            headers={**reviewer, "Idempotency-Key": key})
    print("survived", flush=True)

asyncio.run(main())
"""


def settings_for(data_dir: Path) -> Settings:
    return Settings.model_validate({"data_dir": data_dir, "api": {"idempotency_lease_s": LEASE_S}})


@asynccontextmanager
async def api_on(data_dir: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Runtime]]:
    async with open_runtime(settings_for(data_dir)) as runtime:
        transport = httpx.ASGITransport(app=create_app(ports=runtime, auth=TEST_AUTH))
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
            yield http, runtime


def crash_after_commit(data_dir: Path, answer_file: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]),
        "FACTLEDGER_API__IDEMPOTENCY_LEASE_S": str(LEASE_S),
        "FACTLEDGER_EMBEDDER__KIND": "hashing",
    }
    child = subprocess.run(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", CHILD, str(data_dir), str(answer_file), KEY],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr
    ids: dict[str, str] = json.loads(answer_file.with_name("ids.json").read_text())
    return ids


async def retried(http: httpx.AsyncClient, path: str, body: object) -> httpx.Response:
    """A client's retry with the same key: again while told 409 "still running"."""
    reviewer = bearer(token(Role.REVIEWER, principal_id="reviewer-1"))
    deadline = time.monotonic() + RETRY_FOR_S
    while True:
        response = await http.post(path, json=body, headers={**reviewer, "Idempotency-Key": KEY})
        if response.status_code != 409 or "retry later" not in response.text:
            return response
        assert time.monotonic() < deadline, "the key stayed in progress"
        await asyncio.sleep(LEASE_S / 5)


async def test_a_retry_after_a_crash_between_the_events_and_the_response_gets_the_same_answer(
    tmp_path: Path,
) -> None:
    data_dir, answer_file = tmp_path / "data", tmp_path / "answer.json"
    ids = crash_after_commit(data_dir, answer_file)
    first: dict[str, Any] = json.loads(answer_file.read_text())
    assert first["status"] == "confirmed"
    assert first["applied"] is True

    async with api_on(data_dir) as (http, runtime):
        path = f"/v1/subjects/{ids['subject_id']}/proposals/{ids['change_id']}/approve"
        retry = await retried(http, path, {"note": "checked"})
        assert retry.status_code == 200, retry.text
        assert retry.json() == first
        assert retry.headers.get("Idempotent-Replayed") == "true"
        events = runtime.ledger.recorder.select_events(UUID(ids["subject_id"]))
        assert sum("change_confirmed" in e.topic for e in events) == 1
