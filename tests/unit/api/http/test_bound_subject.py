"""An agent token bound to a reference: the subject and its tenant from one read's hop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.api.http.auth import Principal, Role, SubjectClaim
from factledger.api.http.deps import own_subject_id, read_tenant
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger


def agent(ref: str) -> Principal:
    return Principal("agent", "acme", Role.AGENT, SubjectClaim(kind="customer", ref=ref))


def test_resolving_the_token_s_reference_leaves_the_subject_s_tenant_known(
    tmp_path: Path,
) -> None:
    keys = InMemoryKeyStore()
    with Ledger(sqlite_env(tmp_path / "ledger.db"), keys=keys) as ledger:
        registered = ledger.register_subject(RegisterSubject("acme", "customer", "c-1"))
    # Another process, which has met neither the reference nor the subject.
    with Ledger(sqlite_env(tmp_path / "ledger.db"), keys=keys) as ledger:
        subject_id = asyncio.run(own_subject_id(agent("c-1"), ledger))

        assert subject_id == registered.subject_id
        # The check that follows needs no read of its own.
        assert ledger.known_tenant(subject_id) == "acme"


def test_a_reference_with_no_subject_yet_is_left_to_the_tenant_check() -> None:
    with Ledger(popo_env(), keys=InMemoryKeyStore()) as ledger:
        subject_id = asyncio.run(own_subject_id(agent("nobody"), ledger))

        assert ledger.known_tenant(subject_id) is None
        assert asyncio.run(read_tenant(ledger, subject_id)) is None  # a 404 for the route
