"""A recall whose subject check can only find the subject unregistered (an agent token bound
to a reference, an id derived without a read) runs while the check reads the tenant; the
check's verdict still decides the answer, and a recall it refuses is cancelled unseen."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from types import SimpleNamespace
from typing import Any
from uuid import UUID

import pytest

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.idempotency_store import InMemoryIdempotencyStore
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.api.http.auth import Principal, Role, SubjectClaim, TokenVerifier
from factledger.api.http.deps import ME, ApiState
from factledger.api.http.errors import SubjectNotFoundError
from factledger.api.http.metrics import ApiMetrics
from factledger.api.http.overload import WriteLimiter
from factledger.api.http.routes.recall import checked_recall
from factledger.api.http.schemas.recall import RecallIn, RecallOut
from factledger.api.http.subject_ahead import subject_ahead
from factledger.api.settings import AuthSettings
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.event_store_errors import EventStoreUnavailableError
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.types import (
    Degraded,
    Note,
    NoteKind,
    NoteOrigin,
    RecallResult,
)

WAIT_S = 10.0  # a bound on a wait that should end at once, never a timing claim
FOUND = RecallResult(notes=(Note("Prefers email.", NoteOrigin(NoteKind.MEMORY, "m-1")),))


class HeldRecall:
    """`Recall` as the route uses it: `recall` signals its start, then waits to be let go."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = asyncio.Event()
        self.cancelled = False
        self.subjects: list[UUID] = []

    def budget_s(self, tenant: str | None, *, context: bool = False) -> float:
        return 60.0

    async def recall(self, subject_id: UUID, query: str, **_: Any) -> RecallResult:
        self.subjects.append(subject_id)
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return FOUND

    def unanswered(self, subject_id: UUID, reason: Degraded) -> RecallResult:
        return RecallResult(degraded=reason)


def agent(ref: str, *, tenant: str = "acme") -> Principal:
    return Principal("agent", tenant, Role.AGENT, SubjectClaim(kind="customer", ref=ref))


def state_of(ledger: Ledger) -> ApiState:
    return ApiState(
        verifier=TokenVerifier(AuthSettings()),
        metrics=ApiMetrics(),
        idempotency=InMemoryIdempotencyStore(),
        writes=WriteLimiter(limit=1, wait_s=0.1),
        ports=SimpleNamespace(ledger=ledger),  # type: ignore[arg-type]
    )


async def recall_of(ref: str, recall: HeldRecall, ledger: Ledger) -> RecallOut:
    """The route's recall for an agent token bound to `ref`, arriving now."""
    body, arrived_at = RecallIn(query="contact"), time.monotonic()
    return await checked_recall(body, agent(ref), ME, recall, state_of(ledger), arrived_at)  # type: ignore[arg-type]


@pytest.fixture
def ledger() -> Ledger:
    ledger = Ledger(popo_env(), keys=InMemoryKeyStore())
    ledger.register_subject(RegisterSubject("acme", "customer", "c-1"))
    return ledger


def tenant_read_after_recall_started(
    ledger: Ledger, recall: HeldRecall, monkeypatch: pytest.MonkeyPatch
) -> list[bool]:
    """The check's tenant read, answering only once the recall has started (or after
    `WAIT_S`); what it saw is returned for the test to read."""
    real, seen = ledger.tenant_of, []

    def read(subject_id: UUID) -> str:
        seen.append(recall.started.wait(WAIT_S))
        return real(subject_id)

    monkeypatch.setattr(ledger, "tenant_of", read)
    ledger._tenants = type(ledger._tenants)()  # as in a process that has not met the subject
    return seen


async def test_a_registered_subject_s_recall_runs_while_its_tenant_is_read(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    recall = HeldRecall()
    seen = tenant_read_after_recall_started(ledger, recall, monkeypatch)

    checked = asyncio.Event()
    loop = asyncio.get_running_loop()

    def read(subject_id: UUID) -> str:
        try:
            return tenant_read(subject_id)
        finally:
            loop.call_soon_threadsafe(checked.set)

    tenant_read = ledger.tenant_of
    monkeypatch.setattr(ledger, "tenant_of", read)

    async def let_go_once_checked() -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(checked.wait(), WAIT_S)
        recall.release.set()

    answer, _ = await asyncio.gather(
        recall_of("c-1", recall, ledger),
        let_go_once_checked(),
    )

    assert seen == [True]
    assert [note.text for note in answer.notes] == ["Prefers email."]
    assert answer.degraded is None


async def test_an_unregistered_reference_is_refused_and_its_recall_cancelled(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    recall = HeldRecall()
    seen = tenant_read_after_recall_started(ledger, recall, monkeypatch)

    with pytest.raises(SubjectNotFoundError):
        await recall_of("nobody", recall, ledger)
    await asyncio.sleep(0)  # the cancellation reaches the recall's task

    assert seen == [True]
    assert recall.cancelled


async def test_a_tenant_read_that_fails_answers_degraded_and_drops_the_recall(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    recall = HeldRecall()

    def unavailable(subject_id: UUID) -> str:
        recall.started.wait(WAIT_S)
        raise EventStoreUnavailableError("event store unreachable")

    monkeypatch.setattr(ledger, "tenant_of", unavailable)
    ledger._tenants = type(ledger._tenants)()

    answer = await recall_of("c-1", recall, ledger)
    await asyncio.sleep(0)

    assert (answer.degraded, answer.notes) == ("source_error", [])
    assert recall.cancelled


def test_only_a_reference_bound_agent_s_unchecked_subject_goes_ahead(ledger: Ledger) -> None:
    ours = ledger.subject_id_for("acme", "customer", "c-2")  # derived, not registered
    ledger._tenants = type(ledger._tenants)()

    assert subject_ahead(agent("c-2"), ledger, ME) == ours
    # The check goes first for every other request:
    service = Principal("svc", "acme", Role.SERVICE)
    bound_to_id = Principal("agent", "acme", Role.AGENT, SubjectClaim(subject_id=str(ours)))
    assert subject_ahead(service, ledger, str(ours)) is None
    assert subject_ahead(bound_to_id, ledger, ME) is None
    assert subject_ahead(agent("c-2"), ledger, str(ours)) is None
    assert subject_ahead(agent("bad/ref\x00"), ledger, ME) is None
    # ... and where the tenant is known (the check reads nothing then).
    ledger.register_subject(RegisterSubject("acme", "customer", "c-2"))
    ledger.tenant_of(ours)
    assert subject_ahead(agent("c-2"), ledger, ME) is None


def test_a_process_without_the_id_key_yet_checks_first() -> None:
    keys = InMemoryKeyStore()
    with Ledger(popo_env(), keys=keys) as first:
        first.register_subject(RegisterSubject("acme", "customer", "c-1"))
    # A process that has not read the deployment's key derives nothing without a read.
    with Ledger(popo_env(), keys=keys) as fresh:
        assert subject_ahead(agent("c-1"), fresh, ME) is None
