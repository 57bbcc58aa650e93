"""The decision records' index lists every record once, and only records that exist."""

from __future__ import annotations

import re
from pathlib import Path

ADR_DIR = Path(__file__).resolve().parents[2] / "docs" / "adr"
ROW = re.compile(r"^\| (\d{4}) \| \[[^\]]+\]\((\d{4}-[a-z0-9-]+\.md)\) \| ([^|]+) \|")
KINDS = ("decision", "decision; carries tuning figures")


def _rows() -> list[tuple[str, str, str, str]]:
    rows = []
    for line in (ADR_DIR / "README.md").read_text(encoding="utf-8").splitlines():
        found = ROW.match(line)
        if found:
            kind = line.rstrip(" |").rsplit("|", 1)[1].strip()
            rows.append((found.group(1), found.group(2), found.group(3).strip(), kind))
    return rows


def test_every_record_is_indexed_once_and_every_row_has_its_record() -> None:
    files = sorted(p.name for p in ADR_DIR.glob("[0-9][0-9][0-9][0-9]-*.md"))
    linked = sorted(row[1] for row in _rows())
    assert linked == files


def test_a_row_is_numbered_as_its_record_and_heads_with_its_number() -> None:
    for number, file, _status, _kind in _rows():
        assert file.startswith(number + "-")
        first_line = (ADR_DIR / file).read_text(encoding="utf-8").splitlines()[0]
        assert first_line.startswith(f"# {number}. "), file


def test_the_index_lists_decisions_only() -> None:
    # Tuning records (levers measured and not kept) live with the measurements in
    # docs/benchmarks.md, not among the decisions.
    assert {row[3] for row in _rows()} <= set(KINDS)


def test_every_record_states_its_status() -> None:
    for _number, file, _status, _kind in _rows():
        text = (ADR_DIR / file).read_text(encoding="utf-8")
        assert re.search(r"^Status: ", text, re.MULTILINE), file
