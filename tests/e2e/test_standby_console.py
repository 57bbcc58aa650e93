"""The console's pages read a hot standby too, with the reviewer's read-your-writes cookie.

A console write (here a forget) answers with a redirect that sets the position cookie; the
pages the browser reads next come from the primary until the standby has replayed that
position. Without the cookie a page reads the standby. The memory page shows the backend's
memories marked by the ledger's decisions, which it reads from the subject's aggregate and its
events: both come from one read of the ledger's history, so from one server.

The standby's replay is paused (`pg_wal_replay_pause()`) to make it lag on purpose; the cluster
and the API's fixture are those of the standby's other tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID

import httpx
import pytest
from e2e.test_console_memory_page import row_of
from e2e.test_standby_reads import (
    Standby,
    cluster,
    replayed,
    standby,
    synced_position,
    tell,
)
from support.api_harness import asgi_client
from support.console_seed import csrf_of, sign_in

from factledger.adapters.read_routing import reading_from_standby
from factledger.api.console.app import create_app
from factledger.api.http.auth import Role
from factledger.api.http.read_routing import POSITION_COOKIE
from factledger.application.memory.record_ids import namespace_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]
__all__ = ["cluster", "standby"]  # the fixtures, shared with the standby's other tests

TENANT = "t1"  # the test tokens' tenant
SAID = "We work with Supplier Amber."
WORD = "Amber"  # in the memory the extractor makes of it


@asynccontextmanager
async def console(standby: Standby) -> AsyncIterator[httpx.AsyncClient]:
    """The API with its console, on the standby fixture's runtime."""
    async with asgi_client(create_app(standby.settings, ports=standby.runtime)) as web:
        yield web


def subject_of(standby: Standby) -> UUID:
    return standby.runtime.ledger.subject_id_for(TENANT, "lead", "crm-standby")


async def memory_of(standby: Standby, subject_id: UUID, text: str) -> str:
    backend = standby.runtime.backend
    assert backend is not None
    memories = await backend.list_memories(namespace_for(subject_id))
    (memory,) = [m for m in memories if text in m.text]
    return memory.id


async def forget(web: httpx.AsyncClient, subject_id: UUID, memory_id: str) -> httpx.Response:
    url = f"/console/subjects/{subject_id}/forget"
    confirm = await web.get(f"{url}?memory_id={memory_id}")
    assert confirm.status_code == 200, confirm.text
    form = {
        "csrf": csrf_of(confirm.text),
        "nonce": "c" * 24,
        "reason": "the lead asked",
        "memory_id": memory_id,
    }
    done = await web.post(url, data=form)
    assert done.status_code == 303, done.text
    return done


async def page(web: httpx.AsyncClient, url: str) -> str:
    answer = await web.get(url)
    assert answer.status_code == 200, answer.text
    return answer.text


async def test_the_memory_page_reads_the_standby_and_never_older_than_the_reviewers_write(
    standby: Standby,
) -> None:
    await synced_position(standby)
    await tell(standby, "m-1", SAID)
    replayed(standby.cluster, await synced_position(standby))
    subject_id = subject_of(standby)
    memory_id = await memory_of(standby, subject_id, WORD)
    url = f"/console/subjects/{subject_id}/memory"
    async with console(standby) as web:
        assert (await sign_in(web, Role.ADMIN, tenant=TENANT)).status_code == 303
        served, _ = await standby.routes(web)
        assert WORD in row_of(await page(web, url), memory_id)
        assert (await standby.routes(web))[0] == served + 1

        standby.replay(paused=True)
        done = await forget(web, subject_id, memory_id)
        assert done.cookies[POSITION_COOKIE] == done.headers["Factledger-Position"]
        served, kept = await standby.routes(web)

        # The browser sends the cookie its write set: the paused standby is older than the
        # forget, so the primary serves the page, and the memory is marked, its words gone.
        row = row_of(await page(web, url), memory_id)
        assert "forgotten" in row
        assert "the lead asked" in row
        assert WORD not in row
        assert await standby.routes(web) == (served, kept + 1)

        # Without the cookie the standby serves the page: it has not replayed the forget, and
        # its aggregate and events agree (the memory is not marked by either).
        web.cookies.delete(POSITION_COOKIE, path="/console")
        row = row_of(await page(web, url), memory_id)
        assert WORD in row
        assert "forgotten" not in row
        assert (await standby.routes(web))[0] == served + 1

        standby.replay(paused=False)
        replayed(standby.cluster, done.headers["Factledger-Position"])
        # Replayed: the standby's page holds the forget.
        assert WORD not in row_of(await page(web, url), memory_id)
        assert (await standby.routes(web))[0] == served + 2


async def test_the_sessions_page_reads_the_standby_and_never_older_than_the_reviewers_write(
    standby: Standby,
) -> None:
    await synced_position(standby)  # registers the subject
    await tell(standby, "p-1", "We buy from Supplier Coral.")
    replayed(standby.cluster, await synced_position(standby))
    subject_id = subject_of(standby)
    url = f"/console/subjects/{subject_id}/sessions"
    async with console(standby) as web:
        assert (await sign_in(web, Role.REVIEWER, tenant=TENANT)).status_code == 303
        standby.replay(paused=True)
        ended = await tell(standby, "p-2", "We moved to Supplier Beryl in March.")
        # The views caught up on the primary beforehand: a read request that has to catch
        # them up itself has written, and reads the primary from then on.
        standby.runtime.catch_up()
        served, kept = await standby.routes(web)

        # Without a position the standby serves: it has not replayed the second session.
        web.cookies.delete(POSITION_COOKIE, path="/console")
        shown = await page(web, url)
        assert "p-1" in shown
        assert "p-2" not in shown
        assert await standby.routes(web) == (served + 1, kept)

        # With the position of the caller's write (as the cookie a console write sets) the
        # primary serves, and the session is there.
        web.cookies.set(POSITION_COOKIE, ended, path="/console")
        assert "p-2" in await page(web, url)
        assert await standby.routes(web) == (served + 1, kept + 1)


async def test_a_subject_and_its_events_are_read_together_from_one_server(
    standby: Standby,
) -> None:
    await synced_position(standby)  # registers the subject
    await tell(standby, "o-1", "We buy from Supplier Jade.")
    replayed(standby.cluster, await synced_position(standby))
    subject_id = subject_of(standby)
    ledger = standby.runtime.ledger
    standby.replay(paused=True)
    await tell(standby, "o-2", "We moved to Supplier Beryl in March.")
    on_primary = ledger.subject(TENANT, subject_id)

    with reading_from_standby(True):
        read = ledger.subject_as_read(TENANT, subject_id)
        rebuilt = ledger.read_subject(TENANT, subject_id)
    # Both from the standby, which lags: the subject is the one its events make.
    assert read.subject.version == read.events[-1].originator_version
    assert read.subject.version < on_primary.version
    assert rebuilt.version == read.subject.version
    with reading_from_standby(False):
        read = ledger.subject_as_read(TENANT, subject_id)
    assert read.subject.version == on_primary.version == read.events[-1].originator_version
