"""The CLI's tables read at any width: a table where every word fits, else one block per row;
a value is wrapped, never cut to "Supp…"."""

from __future__ import annotations

import io

from rich.console import Console

from factledger.api.cli.render import Records

COLUMNS = ("field", "what", "value", "from", "until", "origin", "confirmed/asked by", "why")
LONG_QUOTE = "We moved to Supplier B last month, after the deliveries kept arriving late."
ROW = (
    "purchase_intent",
    "set",
    "Supplier B",
    "v3 2026-03-04 09:00",
    "",
    "stated",
    "staff:reviewer-07",
    LONG_QUOTE,
)


def printed(records: Records, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(records)
    return console.file.getvalue()  # type: ignore[attr-defined]


def lines_of(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_at_80_columns_each_row_is_a_block_with_every_value_whole() -> None:
    text = printed(Records("Field history", COLUMNS, [ROW, ROW]), 80)
    assert "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    lines = lines_of(text)
    assert "value               Supplier B" in lines
    assert "field               purchase_intent" in lines
    # The quote wraps under its own name, whole, and an empty cell gets no line.
    assert f"why {LONG_QUOTE}" in " ".join(text.split())
    assert not any(line.startswith("until") for line in lines)


def test_where_the_columns_fit_it_is_a_table() -> None:
    text = printed(Records("Field history", COLUMNS, [ROW]), 200)
    assert "┃ field" in text
    assert LONG_QUOTE in text
    assert "…" not in text


def test_a_value_longer_than_the_terminal_wraps_in_its_block() -> None:
    word = "x" * 120  # one word wider than the terminal: folded, not cut
    text = printed(Records("Versions", ("version", "fields"), [("1", f"note={word}")]), 80)
    assert "…" not in text
    assert "".join(line.strip() for line in text.splitlines()).count("x") == 120
