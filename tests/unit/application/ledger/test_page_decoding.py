"""A page of stored events decodes as each of them does alone (`ShreddingMapper`: a page finds
each key's cipher once): the same values, forgotten and erased fields as None, and a sealed
field that does not open (tampered) as None without taking its neighbours with it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent

from factledger.application.ledger.cipher import FORGOTTEN_LINE, PREFIX, ShreddingMapper
from factledger.application.ledger.commands import EraseSubject, ForgetField, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import ChangeProposed, SessionRecorded
from factledger.domain.provenance import Actor, ActorKind

from .test_ledger_forget import LEAD, story

STAFF = Actor(ActorKind.STAFF, "reviewer-1")


def _stored(ledger: Ledger) -> list[StoredEvent]:
    return list(ledger.recorder.select_notifications(1, 10_000))


def _one_by_one(mapper: ShreddingMapper, stored: list[StoredEvent]) -> list[Any]:
    return [(type(e), vars(e)) for e in (mapper.to_domain_event(s) for s in stored)]


def _by_pages(mapper: ShreddingMapper, stored: list[StoredEvent], page: int) -> list[Any]:
    found = []
    for start in range(0, len(stored), page):
        found += [(type(e), vars(e)) for e in mapper.to_domain_events(stored[start : start + page])]
    return found


@pytest.fixture
def told(ledger: Ledger) -> Ledger:
    """The forget story's subject with one field forgotten, and a second subject erased."""
    sid = story(ledger).subject_id
    ledger.forget_field(ForgetField("acme", sid, "switch_reason", LEAD, "asked"))
    other = ledger.register_subject(RegisterSubject("acme", "lead", "lead-8")).subject_id
    ledger.erase_subject(EraseSubject("acme", other, STAFF, "asked"))
    return ledger


@pytest.mark.parametrize("page", [1, 2, 3, 10_000])
def test_a_page_decodes_as_its_events_do_one_by_one(told: Ledger, page: int) -> None:
    assert isinstance(told.mapper, ShreddingMapper)
    stored = _stored(told)
    alone = _one_by_one(told.mapper, stored)
    assert _by_pages(told.mapper, stored, page) == alone
    proposed = [state for cls, state in alone if issubclass(cls, ChangeProposed)]
    forgotten = [state for state in proposed if state["field"] == "switch_reason"]
    kept = [state for state in proposed if state["field"] == "supplier"]
    assert forgotten
    assert all(state["value"] is None and state["rationale"] is None for state in forgotten)
    assert all(state["value"] == {"type": "text", "value": "Supplier B"} for state in kept)


def test_a_field_that_does_not_open_reads_as_none_and_spares_the_rest(told: Ledger) -> None:
    assert isinstance(told.mapper, ShreddingMapper)
    stored = _stored(told)
    at, original = next((n, s) for n, s in enumerate(stored) if b'"field":"supplier"' in s.state)
    sealed = original.state.split(b'"value":"', 1)[1].split(b'"', 1)[0]
    assert sealed.startswith(PREFIX.encode())
    # One base64 character of the ciphertext changed: the tag no longer checks out.
    flipped = sealed[:-6] + (b"A" if sealed[-6:-5] != b"A" else b"B") + sealed[-5:]
    stored[at] = dataclasses.replace(original, state=original.state.replace(sealed, flipped))
    alone = _one_by_one(told.mapper, stored)
    assert _by_pages(told.mapper, stored, 10_000) == alone
    _, state = alone[at]
    assert state["value"] is None
    assert state["condition"] == "for now"
    assert state["rationale"] == "quoted"


class _AskedKeys:
    """A key store that records which key ids it was asked for."""

    def __init__(self, keys: Any) -> None:
        self._keys = keys
        self.asked: list[str] = []

    def keys_by_id(self, key_ids: list[str]) -> Any:
        self.asked += key_ids
        return self._keys.keys_by_id(key_ids)

    def key(self, key_id: str) -> Any:
        self.asked.append(key_id)
        return self._keys.key(key_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._keys, name)


def _line_key_ids(stored: list[StoredEvent]) -> set[str]:
    ids = set()
    for event in stored:
        state = json.loads(event.state)
        for line in state.get("transcript") or [] if isinstance(state, dict) else []:
            text = line.get("text") if isinstance(line, dict) else None
            if isinstance(text, str) and text.startswith(PREFIX):
                ids.add(text[len(PREFIX) :].split(":", 1)[0])
    return ids


def test_a_page_read_without_the_words_leaves_only_the_lines_sealed(told: Ledger) -> None:
    assert isinstance(told.mapper, ShreddingMapper)
    stored = _stored(told)
    opened = _by_pages(told.mapper, stored, 10_000)
    told.mapper.forget_cached()
    asked = _AskedKeys(told.mapper.keys)
    told.mapper.keys = asked
    unopened = [
        (type(e), vars(e)) for e in told.mapper.to_domain_events(stored, transcript_text=False)
    ]
    line_keys = _line_key_ids(stored)
    assert line_keys
    assert asked.asked
    assert not line_keys & set(asked.asked)  # no line's key was read
    sessions = 0
    for (cls, words), (same_cls, sealed) in zip(opened, unopened, strict=True):
        assert cls is same_cls
        if not issubclass(cls, SessionRecorded):
            assert sealed == words
            continue
        sessions += 1
        assert {k: v for k, v in sealed.items() if k != "transcript"} == {
            k: v for k, v in words.items() if k != "transcript"
        }
        assert len(sealed["transcript"]) == len(words["transcript"])
        # Roles and times as said; the words stay sealed, never read as plain text.
        for line, said in zip(sealed["transcript"], words["transcript"], strict=True):
            assert {k: v for k, v in line.items() if k != "text"} == {
                k: v for k, v in said.items() if k not in {"text", FORGOTTEN_LINE}
            }
            assert line["text"].startswith(PREFIX)
    assert sessions
