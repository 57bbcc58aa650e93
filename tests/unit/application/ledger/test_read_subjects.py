"""`Ledger.read_subjects`: several subjects read together (the console's queue page quotes
the evidence of up to fifty) are the subjects one load each gives, and never carry words
that were forgotten or erased."""

from __future__ import annotations

from uuid import UUID, uuid4

from factledger.application.ledger.commands import (
    EraseSubject,
    ForgetField,
    ProposeChange,
    RecordSession,
    RegisterSubject,
)
from factledger.application.ledger.ledger import Ledger
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import TextValue
from factledger.testing.manual_clock import ManualClock

LEAD = Actor(ActorKind.SUBJECT, "lead")
MODEL = Actor(ActorKind.MODEL, "m")


def _said(n: int) -> tuple[str, ...]:
    return ("Who supplies you now?", f"Supplier Quokka{n}, since spring.", "Thanks.")


def _subject_with_evidence(ledger: Ledger, clock: ManualClock, n: int, tenant: str) -> UUID:
    sid = ledger.register_subject(RegisterSubject(tenant, "lead", f"lead-{n}")).subject_id
    roles = (Role.AGENT, Role.SUBJECT, Role.AGENT)
    transcript = tuple(Message(r, t) for r, t in zip(roles, _said(n), strict=True))
    at = clock.now()
    ledger.record_session(RecordSession(tenant, sid, "call-1", Channel.CHAT, at, at, transcript))
    ledger.propose_change(
        ProposeChange(
            tenant,
            sid,
            "supplier",
            Operation.SET,
            TextValue(f"Quokka{n}"),
            Origin.STATED,
            MODEL,
            ledger.subject(tenant, sid).profile_version,
            evidence=Evidence("call-1", 1, f"Quokka{n}"),
        )
    )
    return sid


def _words(subject: Subject) -> str:
    return " ".join(
        text for info in subject.sessions.values() for _, text in info.messages if text
    ) + " ".join(str(value) for value in subject.fields.values())


def test_subjects_read_together_are_the_subjects_loaded_one_by_one(
    ledger: Ledger, clock: ManualClock
) -> None:
    sids = [_subject_with_evidence(ledger, clock, n, "acme") for n in range(5)]

    together = ledger.read_subjects("acme", sids)

    assert set(together) == set(sids)
    for sid in sids:
        alone = ledger.read_subject("acme", sid)
        assert together[sid].version == alone.version
        assert together[sid].sessions == alone.sessions
        assert together[sid].changes.keys() == alone.changes.keys()
        assert "Quokka" in _words(together[sid])


def test_unknown_subjects_and_another_tenants_are_absent(
    ledger: Ledger, clock: ManualClock
) -> None:
    ours = _subject_with_evidence(ledger, clock, 1, "acme")
    theirs = _subject_with_evidence(ledger, clock, 2, "globex")

    found = ledger.read_subjects("acme", [ours, theirs, uuid4(), ours])

    assert set(found) == {ours}
    assert ledger.read_subjects("acme", []) == {}


def test_forgotten_words_are_never_read_together(ledger: Ledger, clock: ManualClock) -> None:
    # Given three subjects quoting their supplier; the second asks for it to be forgotten
    sids = [_subject_with_evidence(ledger, clock, n, "acme") for n in range(3)]
    ledger.read_subjects("acme", sids)  # their keys were read (and cached) before the forget
    ledger.forget_field(ForgetField("acme", sids[1], "supplier", LEAD, "asked"))

    # When they are read together
    together = ledger.read_subjects("acme", sids)

    # Then the forgotten subject's words are gone (as one load alone has them), the others stay
    assert "Quokka1" not in _words(together[sids[1]])
    assert together[sids[1]].sessions == ledger.read_subject("acme", sids[1]).sessions
    assert "Quokka0" in _words(together[sids[0]])
    assert "Quokka2" in _words(together[sids[2]])


def test_an_erased_subjects_words_are_never_read_together(
    ledger: Ledger, clock: ManualClock
) -> None:
    sids = [_subject_with_evidence(ledger, clock, n, "acme") for n in range(2)]
    ledger.read_subjects("acme", sids)
    ledger.erase_subject(EraseSubject("acme", sids[0], LEAD, "asked"))

    together = ledger.read_subjects("acme", sids)

    assert "Quokka0" not in _words(together[sids[0]])
    assert together[sids[0]].sessions == ledger.read_subject("acme", sids[0]).sessions
    assert "Quokka1" in _words(together[sids[1]])


def test_subjects_read_again_take_what_was_recorded_since(
    ledger: Ledger, clock: ManualClock
) -> None:
    # Given subjects read together once (a second read starts from what the first one kept)
    sids = [_subject_with_evidence(ledger, clock, n, "acme") for n in range(3)]
    first = ledger.read_subjects("acme", sids)

    # When one of them records a new session and proposal meanwhile
    ledger.propose_change(
        ProposeChange(
            "acme",
            sids[2],
            "budget",
            Operation.SET,
            TextValue("40k"),
            Origin.STATED,
            MODEL,
            ledger.subject("acme", sids[2]).profile_version,
            evidence=Evidence("call-1", 1, "Quokka2"),
        )
    )
    again = ledger.read_subjects("acme", sids)

    # Then the second read has it, as a load of its own does, and the first read's subject
    # (handed to its caller) was not changed under it
    alone = ledger.read_subject("acme", sids[2])
    assert again[sids[2]].changes.keys() == alone.changes.keys()
    assert len(again[sids[2]].changes) == 2
    assert len(first[sids[2]].changes) == 1
    assert again[sids[0]].version == ledger.read_subject("acme", sids[0]).version
