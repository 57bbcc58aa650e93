"""Notes are paraphrases without quotation marks; excerpts are quoted and attributed."""

from __future__ import annotations

from datetime import date

import pytest

from factledger.application.recall.notes import (
    attributed,
    dated,
    summary_text,
    unquote,
    with_previous,
)
from factledger.application.recall.types import Excerpt, Note, NoteKind, NoteOrigin
from factledger.domain.transcript import Channel, Role


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ('said "maybe next quarter"', "said maybe next quarter"),
        ("\u201csmart\u201d and \u2018single\u2019", "smart and single"),
        ("don't  and  won\u2019t", "don't and won\u2019t"),
        ("'quoted'", "quoted"),
    ],
)
def test_unquote_strips_quotation_marks_but_keeps_apostrophes(raw: str, clean: str) -> None:
    assert unquote(raw) == clean


def test_with_previous_keeps_names_whole() -> None:
    assert (
        with_previous("works with Supplier B", "works with Supplier A")
        == "works with Supplier B, previously Supplier A"
    )
    assert with_previous("budget is 80k", "budget is 50k") == "budget is 80k, previously 50k"


def test_dated_note_names_date_and_channel() -> None:
    origin = NoteOrigin(NoteKind.MEMORY, "m-1")
    note = Note("works with Supplier B", origin, on=date(2026, 3, 12), channel=Channel.VOICE)
    assert dated(note) == "2026-03-12, voice call: works with Supplier B"
    assert dated(Note("no date", origin)) == "no date"


def test_excerpt_is_quoted_and_attributed() -> None:
    excerpt = Excerpt("We moved.", Role.SUBJECT, "s-1", 1, date(2026, 3, 12), Channel.WHATSAPP)
    assert attributed(excerpt) == "Subject, 2026-03-12, WhatsApp: \u201cWe moved.\u201d"


def test_summary_text_prefers_text_then_flattens_scalars() -> None:
    assert summary_text({"text": 'asked about "pricing"'}) == "asked about pricing"
    assert summary_text({"topic": "supplier", "turns": 4, "nested": {"x": 1}}) == (
        "topic: supplier; turns: 4"
    )
