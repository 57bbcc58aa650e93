"""`Ledger.tenant_of` answers from a subject's first event, then from a bounded cache."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest

from factledger.application.errors import NotFoundError
from factledger.application.ledger.cipher import ShreddingMapper
from factledger.application.ledger.commands import EraseSubject, RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.tenants import TenantCache
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.transcript import Channel, Message, Role

STAFF = Actor(ActorKind.STAFF, "rev-1")
AT = datetime(2026, 2, 2, 9, 0, tzinfo=UTC)


def test_the_tenant_of_a_subject_is_the_one_it_was_registered_in(ledger: Ledger) -> None:
    ours = ledger.register_subject(RegisterSubject("acme", "lead", "l-1")).subject_id
    theirs = ledger.register_subject(RegisterSubject("globex", "lead", "l-1")).subject_id
    said = (Message(Role.SUBJECT, "Supplier A.", AT),)
    ledger.record_session(RecordSession("acme", ours, "call-1", Channel.VOICE, AT, AT, said))

    assert ledger.tenant_of(ours) == "acme"
    assert ledger.tenant_of(theirs) == "globex"


def test_an_unknown_subject_is_not_found_and_not_remembered_as_such(ledger: Ledger) -> None:
    subject_id = ledger.subject_id_for("acme", "lead", "l-later")
    with pytest.raises(NotFoundError):
        ledger.tenant_of(subject_id)

    ledger.register_subject(RegisterSubject("acme", "lead", "l-later"))

    assert ledger.tenant_of(subject_id) == "acme"


def test_the_tenant_cache_forgets_the_least_recently_used_first() -> None:
    cache = TenantCache(maxsize=2)
    first, second, third = UUID(int=1), UUID(int=2), UUID(int=3)
    cache.put(first, "acme")
    cache.put(second, "globex")
    assert cache.get(first) == "acme"  # now the most recently used

    cache.put(third, "initech")

    assert len(cache) == 2
    assert cache.get(second) is None
    assert (cache.get(first), cache.get(third)) == ("acme", "initech")


def test_the_tenant_is_read_without_opening_the_registration(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    subject_id = ledger.register_subject(RegisterSubject("acme", "lead", "l-1")).subject_id
    erased = ledger.register_subject(RegisterSubject("acme", "lead", "l-2")).subject_id
    ledger.erase_subject(EraseSubject("acme", erased, STAFF, "asked to be erased"))
    # As a process that has met neither: no tenant cached, no key cached.
    fresh = ledger_without_caches(ledger)
    opened: list[object] = []
    monkeypatch.setattr(ledger.keys, "key", lambda key_id: opened.append(key_id))
    monkeypatch.setattr(ledger.keys, "keys_by_id", lambda ids: opened.append(ids) or {})

    assert fresh.tenant_of(subject_id) == "acme"
    assert fresh.tenant_of(erased) == "acme"  # its reference shredded, its tenant in clear
    assert opened == []


def ledger_without_caches(ledger: Ledger) -> Ledger:
    ledger._tenants = TenantCache()
    mapper = ledger.mapper
    assert isinstance(mapper, ShreddingMapper)
    mapper.forget_cached()
    return ledger
