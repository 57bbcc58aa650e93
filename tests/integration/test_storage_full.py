"""The embedded default (SQLite files) on a disk that fills up: session ends, proposals and
approvals answer 503 `StorageFullError` (never 500) while a profile read of caught-up views still
answers, and once space is freed the same requests succeed, with every file intact and the
views equal to a rebuild.

The data directory is a small tmpfs, which needs the right to mount (root here); elsewhere the
test is skipped and the unit tests' SQLite page limit (`test_sqlite_storage_errors`) stands in.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.api_harness import TEST_AUTH, bearer, line, token

from factledger.adapters.in_memory.view_store import InMemoryViewStore
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.http.errors import STORAGE_RETRY_AFTER_S
from factledger.api.settings import Settings
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection

pytestmark = pytest.mark.integration

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-full"))
REVIEWER = bearer(token(Role.REVIEWER))
SAID = {"role": "subject", "text": "We work with Supplier A."}


@pytest.fixture
def small_disk() -> Iterator[Path]:
    mount_point = Path(tempfile.mkdtemp(prefix="factledger-full-"))
    mounted = subprocess.run(  # noqa: S603 - fixed arguments, no shell
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount_point)],  # noqa: S607
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs privileges this run does not have")
    try:
        yield mount_point
    finally:
        # Lazily: a file the runtime's threads still hold would make a plain unmount fail.
        subprocess.run(["umount", "-l", str(mount_point)], check=False)  # noqa: S603, S607
        if not any(mount_point.iterdir()):
            mount_point.rmdir()


@pytest.fixture
async def api(small_disk: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Runtime]]:
    settings = Settings(data_dir=small_disk, embedder={"kind": "hashing"}, auth=TEST_AUTH)  # type: ignore[arg-type]
    async with open_runtime(settings) as runtime:
        transport = httpx.ASGITransport(app=create_app(settings, ports=runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            yield client, runtime


def fill(disk: Path) -> Path:
    """Writes until the file system refuses another byte; returns the filler to delete."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (b"\0" * 65_536, b"\0" * 512):  # then the last partial block
            try:
                while True:
                    os.write(fd, chunk)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def assert_files_intact(disk: Path) -> None:
    for database in sorted(disk.glob("*.sqlite")):
        with sqlite3.connect(database) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",), database.name


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def test_a_full_disk_answers_503_and_loses_nothing(
    api: tuple[httpx.AsyncClient, Runtime], small_disk: Path
) -> None:
    client, runtime = api
    register = {"kind": "lead", "external_ref": "crm-full"}
    subject = await ok(await client.post("/v1/subjects", json=register, headers=SERVICE), 201)
    for session in ("s-1", "s-2"):
        start = {"session_id": session, "channel": "voice"}
        await ok(await client.post("/v1/subjects/me/sessions", json=start, headers=AGENT), 201)
        url = f"/v1/subjects/me/sessions/{session}/messages"
        await ok(await client.post(**line(url, SAID, AGENT)))
    await ok(await client.post("/v1/subjects/me/sessions/s-1/end", json={}, headers=AGENT))
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier A"},
        "origin": "stated",
        "evidence": {"session_id": "s-1", "message_index": 0, "quote": "Supplier A"},
    }
    change = await ok(
        await client.post("/v1/subjects/me/proposals", json=proposal, headers=AGENT), 201
    )
    approve = f"/v1/subjects/{subject['subject_id']}/proposals/{change['change_id']}/approve"
    second = {**proposal, "field": "budget_owner"}

    # The views follow the log in the background; caught up now, a read has nothing to write.
    runtime.catch_up()

    # When: the disk is full
    filler = fill(small_disk)
    # Then: a read needs no space; the views answer as they are
    read = await ok(await client.get("/v1/subjects/me/profile", headers=AGENT))
    assert (read["version"], read["fields"]) == (0, {})
    # And: a clear 503 on every kind of request that writes
    attempts = {
        "session end": client.post("/v1/subjects/me/sessions/s-2/end", json={}, headers=AGENT),
        "proposal": client.post("/v1/subjects/me/proposals", json=second, headers=AGENT),
        "approval": client.post(approve, json={}, headers=REVIEWER),
    }
    for what, request in attempts.items():
        response = await request
        assert response.status_code == 503, (what, response.text)
        assert response.json()["error"] == "StorageFullError", what
        assert response.headers["Retry-After"] == str(STORAGE_RETRY_AFTER_S)

    # When: space is freed, the same requests succeed without a restart
    filler.unlink()
    ended = await ok(await client.post("/v1/subjects/me/sessions/s-2/end", json={}, headers=AGENT))
    assert ended["message_count"] == 1
    await ok(await client.post("/v1/subjects/me/proposals", json=second, headers=AGENT), 201)
    await ok(await client.post(approve, json={}, headers=REVIEWER))
    profile = await ok(await client.get("/v1/subjects/me/profile", headers=AGENT))
    assert profile["fields"]["supplier"]["display"] == "Supplier A"

    # And: every file is intact and the views equal a rebuild from the log
    assert_files_intact(small_disk)
    runtime.catch_up()
    rebuilt = ProfileProjection(InMemoryViewStore("profile"))
    Follower(runtime.ledger, [rebuilt]).catch_up()
    assert rebuilt.dump() == runtime.projection.dump()
