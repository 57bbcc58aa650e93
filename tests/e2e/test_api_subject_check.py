"""The subject check every subject route runs (`SubjectIdDep`) reads the subject's tenant, not
the subject: its cost does not grow with the subject's history.

Events read are counted as the ledger's store hands them back (the check reads the tenant from
the stored registration without decoding it whole), with the library's aggregate cache emptied
first, as after a restart or an eviction.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
from eventsourcing.persistence import StoredEvent
from support.api_harness import TEST_AUTH, bearer, build_ports, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.domain.transcript import Channel, Message
from factledger.domain.transcript import Role as Speaker
from factledger.testing.manual_clock import ManualClock

AT = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)
SESSIONS = 60
REVIEWER = bearer(token(Role.REVIEWER))
FOREIGN_REVIEWER = bearer(token(Role.REVIEWER, tenant="t2"))
UNKNOWN = "00000000-0000-5000-8000-000000000000"


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(AT))


@pytest.fixture
async def http(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client


class EventsRead:
    """Counts the events the ledger's store hands back."""

    def __init__(self, ports: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
        self._ports, self.count = ports, 0
        recorder = ports.ledger.recorder
        select = recorder.select_events

        def counting(*args: Any, **kwargs: Any) -> Sequence[StoredEvent]:
            found = select(*args, **kwargs)
            self.count += len(found)
            return found

        monkeypatch.setattr(recorder, "select_events", counting)

    def start_cold(self, subject_id: UUID) -> None:
        """From zero, with the subject out of the library's aggregate cache (as after a
        restart, or an eviction by a thousand other subjects)."""
        cache = self._ports.ledger.repository.cache
        assert cache is not None
        cache.get(subject_id, evict=True)
        self.count = 0


@pytest.fixture
def events_read(ports: Runtime, monkeypatch: pytest.MonkeyPatch) -> EventsRead:
    return EventsRead(ports, monkeypatch)


def subject_with_sessions(ports: Runtime, ref: str, sessions: int) -> UUID:
    ledger = ports.ledger
    subject_id = ledger.register_subject(RegisterSubject("t1", "lead", ref)).subject_id
    said = (Message(Speaker.SUBJECT, "We still use Supplier A.", AT),)
    for n in range(sessions):
        ledger.record_session(
            RecordSession("t1", subject_id, f"call-{n}", Channel.VOICE, AT, AT, said)
        )
    ports.catch_up()
    return subject_id


async def test_a_request_on_a_long_subject_reads_one_event(
    ports: Runtime, http: httpx.AsyncClient, events_read: EventsRead
) -> None:
    # Given a subject with many sessions, and a ledger that has not loaded it yet
    subject_id = subject_with_sessions(ports, "crm-long", SESSIONS)
    events_read.start_cold(subject_id)

    # When a reviewer reads its profile (a route served by the views alone)
    first = await http.get(f"/v1/subjects/{subject_id}/profile", headers=REVIEWER)

    # Then the subject check read its first event only; the next request reads none
    assert first.status_code == 200, first.text
    assert events_read.count == 1
    again = await http.get(f"/v1/subjects/{subject_id}/profile", headers=REVIEWER)
    assert again.status_code == 200
    assert events_read.count == 1


async def test_the_cost_is_the_same_for_a_short_and_a_long_subject(
    ports: Runtime, http: httpx.AsyncClient, events_read: EventsRead
) -> None:
    short = subject_with_sessions(ports, "crm-short", 1)
    long = subject_with_sessions(ports, "crm-long", SESSIONS)
    counts = []
    for subject_id in (short, long):
        events_read.start_cold(subject_id)
        response = await http.get(f"/v1/subjects/{subject_id}/profile", headers=REVIEWER)
        assert response.status_code == 200, response.text
        counts.append(events_read.count)

    assert counts == [1, 1]


async def test_another_tenants_subject_is_the_same_404_once_its_tenant_is_known(
    ports: Runtime, http: httpx.AsyncClient
) -> None:
    subject_id = subject_with_sessions(ports, "crm-theirs", 3)
    # The tenant is cached by a request of its own tenant first
    ours = await http.get(f"/v1/subjects/{subject_id}/profile", headers=REVIEWER)
    assert ours.status_code == 200

    theirs = await http.get(f"/v1/subjects/{subject_id}/profile", headers=FOREIGN_REVIEWER)
    nobody = await http.get(f"/v1/subjects/{UNKNOWN}/profile", headers=FOREIGN_REVIEWER)

    assert theirs.status_code == nobody.status_code == 404
    assert theirs.json()["error"] == nobody.json()["error"] == "SubjectNotFoundError"


async def test_an_unknown_subject_is_a_404_and_found_once_registered(
    ports: Runtime, http: httpx.AsyncClient
) -> None:
    subject_id = ports.ledger.subject_id_for("t1", "lead", "crm-later")
    before = await http.get(f"/v1/subjects/{subject_id}/profile", headers=REVIEWER)
    assert before.status_code == 404
    assert before.json()["error"] == "SubjectNotFoundError"

    ports.ledger.register_subject(RegisterSubject("t1", "lead", "crm-later"))
    ports.catch_up()

    after = await http.get(f"/v1/subjects/{subject_id}/profile", headers=REVIEWER)
    assert after.status_code == 200, after.text
