"""The domain refuses NUL and lone surrogates in every text a command brings (so the CLI and
the Python API are held to what the HTTP schemas check), naming the part, never the text; and
`domain.text` scrubs such text for the read side."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from factledger.domain.errors import InvalidReferenceError, InvalidSessionError, InvalidValueError
from factledger.domain.proposal import Decision
from factledger.domain.provenance import Actor, ActorKind, Evidence, Origin
from factledger.domain.subject import Subject, keyed_subject_id
from factledger.domain.text import check_json_text, scrub, scrub_json
from factledger.domain.values import OPEN_SCHEMA, ListValue, TextValue
from factledger.testing.subject_builders import (
    FINGERPRINT_KEY,
    REVIEWER,
    T0,
    approve,
    proposal,
    session,
)

BAD = [pytest.param("\x00", id="nul"), pytest.param("\udfff", id="lone-surrogate")]


@pytest.mark.parametrize("bad", BAD)
def test_a_session_with_bad_text_is_refused_by_name(subject: Subject, bad: str) -> None:
    with pytest.raises(InvalidValueError, match=r"^transcript\[1\]\.text: ") as refused:
        subject.record_session(session("s2", f"hi{bad}"), at=T0, fingerprint_key=FINGERPRINT_KEY)
    assert bad not in str(refused.value)
    summary = {"next": [{"step": f"call{bad}"}]}
    with pytest.raises(InvalidValueError, match=r"^summary\.next\[0\]\.step: "):
        subject.record_session(
            replace(session("s3"), summary=summary), at=T0, fingerprint_key=FINGERPRINT_KEY
        )
    with pytest.raises(InvalidSessionError, match="session_id"):
        subject.record_session(session(f"s{bad}"), at=T0, fingerprint_key=FINGERPRINT_KEY)
    assert subject.record_session(session("s4"), at=T0, fingerprint_key=FINGERPRINT_KEY)


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize(
    ("part", "change"),
    [
        ("value.value", lambda bad: {"value": TextValue(f"A{bad}")}),
        ("value.items[1]", lambda bad: {"value": ListValue(("a", f"b{bad}"))}),
        ("condition", lambda bad: {"condition": f"if{bad}"}),
        ("rationale", lambda bad: {"rationale": f"because{bad}"}),
        ("evidence.quote", lambda bad: {"evidence": Evidence("s1", 1, f"Supplier A{bad}")}),
    ],
)
def test_a_proposal_with_bad_text_is_refused_by_name(
    subject: Subject, bad: str, part: str, change: object
) -> None:
    made = replace(proposal(origin=Origin.INFERRED), **change(bad))  # type: ignore[operator]
    with pytest.raises(InvalidValueError, match=f"^{re.escape(part)}: "):
        subject.propose(made, OPEN_SCHEMA, at=T0)


@pytest.mark.parametrize("bad", BAD)
def test_decisions_with_bad_text_are_refused(subject: Subject, bad: str) -> None:
    change = proposal()
    subject.propose(change, OPEN_SCHEMA, at=T0)
    with pytest.raises(InvalidValueError, match=r"^note: "):
        subject.confirm(change.change_id, Decision(REVIEWER, note=f"ok{bad}"), at=T0)
    with pytest.raises(InvalidValueError, match=r"^reason: "):
        subject.reject(change.change_id, by=Decision(REVIEWER), reason=f"no{bad}", at=T0)
    approve(subject, change)
    with pytest.raises(InvalidValueError, match=r"^reason: "):
        subject.forget_field("supplier", by=Decision(REVIEWER), reason=f"r{bad}", at=T0)
    asker = Decision(Actor(ActorKind.SUBJECT, "lead-42"))
    with pytest.raises(InvalidValueError, match=r"^memory_id: "):
        subject.forget_memory(f"m{bad}", by=asker, reason="asked", at=T0)


@pytest.mark.parametrize("bad", BAD)
def test_a_reference_with_bad_text_names_no_subject(bad: str) -> None:
    with pytest.raises(InvalidReferenceError):
        keyed_subject_id("acme", "lead", f"crm{bad}", 0, b"k" * 32)


def test_scrub_replaces_only_nul_and_lone_surrogates() -> None:
    assert scrub("a\x00b\udfffc 👋 é\t") == "a\ufffdb\ufffdc 👋 é\t"
    nested = {"k\x00": ["x\ud800", 3, None, {"y": "ok"}]}
    assert scrub_json(nested) == {"k\ufffd": ["x\ufffd", 3, None, {"y": "ok"}]}
    check_json_text(scrub_json(nested), "summary")
