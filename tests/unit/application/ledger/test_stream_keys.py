"""A subject's stream is decoded with its keys read in one key-store call, not one per key
(a session seals each line under a key of its own), and decodes as its events do alone."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from factledger.application.ledger.cipher import ShreddingMapper
from factledger.application.ledger.commands import ForgetField
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import KeyStore

from .test_ledger_forget import LEAD, story


class CountingKeys:
    """The ledger's key store, counting the reads of keys by id."""

    def __init__(self, inner: KeyStore) -> None:
        self.inner = inner
        self.reads = 0

    def key(self, key_id: str) -> bytes | None:
        self.reads += 1
        return self.inner.key(key_id)

    def keys_by_id(self, key_ids: Collection[str]) -> dict[str, bytes]:
        self.reads += 1
        return self.inner.keys_by_id(key_ids)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_subjects_stream_reads_its_keys_in_one_call(ledger: Ledger) -> None:
    sid = story(ledger).subject_id
    mapper = ledger.mapper
    assert isinstance(mapper, ShreddingMapper)
    mapper.forget_cached()  # as a process that has not met the subject
    counting = CountingKeys(mapper.keys)
    mapper.keys = counting  # type: ignore[assignment]

    events = list(ledger.events.get(sid))

    assert counting.reads == 1
    assert len(events) > 2


def test_a_stream_decodes_as_its_events_do_one_by_one(ledger: Ledger) -> None:
    sid = story(ledger).subject_id
    ledger.forget_field(ForgetField("acme", sid, "switch_reason", LEAD, "asked"))
    mapper = ledger.mapper
    assert isinstance(mapper, ShreddingMapper)
    alone = [mapper.to_domain_event(s) for s in ledger.recorder.select_events(sid)]

    together = list(ledger.events.get(sid))
    latest_two = list(ledger.events.get(sid, desc=True, limit=2))

    assert [(type(e), vars(e)) for e in together] == [(type(e), vars(e)) for e in alone]
    assert [vars(e) for e in latest_two] == [vars(e) for e in alone[::-1][:2]]


class CountingCurrent(CountingKeys):
    """Also counts the reads of current keys by scope."""

    def __init__(self, inner: KeyStore) -> None:
        super().__init__(inner)
        self.current_reads = 0

    def current_many(self, scopes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        self.current_reads += 1
        return self.inner.current_many(scopes)


def test_events_sealed_together_read_their_keys_once_and_open_as_before(ledger: Ledger) -> None:
    sid = story(ledger).subject_id
    mapper = ledger.mapper
    assert isinstance(mapper, ShreddingMapper)
    events = list(ledger.events.get(sid))
    counting = CountingCurrent(mapper.keys)
    mapper.keys = counting  # type: ignore[assignment]

    stored = mapper.to_stored_events(events)

    assert counting.current_reads == 1
    reopened = [mapper.to_domain_event(s) for s in stored]
    assert [(type(e), vars(e)) for e in reopened] == [(type(e), vars(e)) for e in events]
    assert all(
        a.state != b.state
        for a, b in zip(stored, ledger.recorder.select_events(sid), strict=True)
        if b"fl-enc:" in b.state
    )
