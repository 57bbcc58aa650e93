"""The import format: every line validated on its own, errors naming the line and the field,
never the value; lines split with a digest of everything before them."""

from __future__ import annotations

import hashlib
import json

import pytest

from factledger.application.importing.format import (
    MAX_LINE_BYTES,
    ImportLineError,
    SessionLine,
    SubjectLine,
    parse_line,
)
from factledger.application.importing.lines import split_lines

SESSION = {
    "type": "session",
    "subject": {"kind": "lead", "ref": "crm-17"},
    "session_id": "wa-2025-01-14",
    "channel": "whatsapp",
    "started_at": "2025-01-14T09:00:00+00:00",
    "messages": [{"role": "subject", "text": "We work with Supplier A.", "at": None}],
}


def with_(**changes: object) -> bytes:
    return json.dumps({**SESSION, **changes}).encode()


def refused(raw: bytes, line: int = 7) -> ImportLineError:
    with pytest.raises(ImportLineError) as caught:
        parse_line(line, raw)
    assert caught.value.line == line
    return caught.value


def test_a_subject_line_and_a_session_line_parse() -> None:
    subject = parse_line(1, b'{"type": "subject", "kind": "lead", "ref": "crm-17"}')
    assert subject == SubjectLine(type="subject", kind="lead", ref="crm-17")
    session = parse_line(2, with_())
    assert isinstance(session, SessionLine)
    assert session.messages[0].text == "We work with Supplier A."
    assert session.messages[0].at is None


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b"not json", "line"),
        (b"[1, 2]", "type"),
        (b'{"type": "memory"}', "type"),
        (b'{"kind": "lead", "ref": "x"}', "type"),
        (b'{"type": "subject", "kind": "Lead!", "ref": "x"}', "kind"),
        (b'{"type": "subject", "kind": "lead", "ref": "a/b"}', "ref"),
        # An unknown key is the caller's text: named by its place among the keys only.
        (b'{"type": "subject", "kind": "lead", "ref": "x", "jo@example.com": 1}', "keys[3]"),
        (with_(subject={"kind": "lead", "ref": "x", "jo@example.com": 1}), "subject.keys[2]"),
        (with_(channel="pigeon"), "channel"),
        (with_(started_at="2025-01-14T09:00:00"), "started_at"),
        (with_(session_id="has space"), "session_id"),
        (with_(messages=[{"role": "boss", "text": "hi"}]), "messages[0].role"),
        (
            with_(messages=[{"role": "agent", "text": "ok"}, {"role": "subject"}]),
            "messages[1].text",
        ),
        (with_(messages=[{"role": "subject", "text": ""}]), "messages[0].text"),
        (with_(subject={"kind": "lead"}), "subject.ref"),
        (with_(summary={"topic": "\u0000"}), "summary"),
        (b'{"type": "subject", "kind": "lead", "ref": "\\udfff"}', "line"),
    ],
)
def test_a_bad_line_names_its_field(raw: bytes, field: str) -> None:
    assert refused(raw).field == field


def test_an_error_never_quotes_the_value() -> None:
    secret = "my-secret-channel-name"
    error = refused(with_(channel=secret))
    assert secret not in str(error)
    assert "line 7" in str(error)


def test_a_line_over_the_limit_is_refused_unread() -> None:
    assert refused(b" " * (MAX_LINE_BYTES + 1)).field == "line"


def test_lines_are_numbered_like_an_editor_and_digested_cumulatively() -> None:
    data = b'{"a": 1}\n\r\n{"b": 2}'
    lines = list(split_lines([data[:3], data[3:11], data[11:]]))
    assert [line.number for line in lines] == [1, 2, 3]
    assert [line.blank for line in lines] == [False, True, False]
    assert lines[0].raw == b'{"a": 1}'
    assert lines[0].digest == hashlib.sha256(b'{"a": 1}\n').hexdigest()
    assert lines[-1].digest == hashlib.sha256(data).hexdigest()
    assert lines[-1].offset == len(data)
