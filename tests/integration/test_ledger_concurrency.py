"""Concurrent writers on one subject never lose an event, and retries never duplicate one."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import pytest

from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import ProposeChange, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import ChangeProposed
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import TextValue
from factledger.testing.ledger_stores import make_store, open_ledger

WRITERS = 2
COMMANDS_EACH = 12
TENANT = "acme"


@pytest.fixture(
    params=[
        pytest.param("popo", id="popo"),
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
    ]
)
def ledgers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[Ledger]]:
    """One ledger per writer on a shared store, as separate processes would have (POPO
    stores are private to their ledger, so its writers share one)."""
    store: str = request.param
    postgres: PostgresLocation | None = (
        request.getfixturevalue("postgres") if store == "postgres" else None
    )
    shared = make_store(store, workdir=tmp_path, postgres=postgres)
    with shared.resources, ExitStack() as stack:
        first = stack.enter_context(open_ledger(shared))
        others = [
            stack.enter_context(open_ledger(shared)) if shared.shared else first
            for _ in range(WRITERS - 1)
        ]
        yield [first, *others]


def command(subject_id: object, writer: int, n: int) -> ProposeChange:
    return ProposeChange(
        tenant=TENANT,
        subject_id=subject_id,  # type: ignore[arg-type]
        field=f"field_{writer}_{n}",
        operation=Operation.SET,
        value=TextValue(f"value {n}"),
        origin=Origin.INFERRED,
        proposed_by=Actor(ActorKind.MODEL, f"writer-{writer}"),
        based_on_version=0,
    )


def proposed_events(ledger: Ledger) -> list[ChangeProposed]:
    notifications = ledger.recorder.select_notifications(start=1, limit=10_000)
    events = [ledger.mapper.to_domain_event(n) for n in notifications]
    return [e for e in events if isinstance(e, ChangeProposed)]


def test_two_concurrent_writers_never_lose_an_event(ledgers: list[Ledger]) -> None:
    subject_id = ledgers[0].register_subject(RegisterSubject(TENANT, "lead", "busy")).subject_id

    def write(writer: int) -> None:
        for n in range(COMMANDS_EACH):
            ledgers[writer].propose_change(command(subject_id, writer, n))

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(write, range(WRITERS)))

    events = proposed_events(ledgers[0])
    assert len(events) == WRITERS * COMMANDS_EACH
    assert len({e.change_id for e in events}) == WRITERS * COMMANDS_EACH
    assert ledgers[0].subject(TENANT, subject_id).version == 1 + WRITERS * COMMANDS_EACH


def test_the_same_command_sent_by_both_writers_is_applied_once(ledgers: list[Ledger]) -> None:
    subject_id = ledgers[0].register_subject(RegisterSubject(TENANT, "lead", "twice")).subject_id
    commands = [command(subject_id, 0, n) for n in range(COMMANDS_EACH)]

    def deliver(writer: int) -> None:
        for cmd in commands:
            ledgers[writer].propose_change(cmd)

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(deliver, range(WRITERS)))

    assert len(proposed_events(ledgers[0])) == COMMANDS_EACH
