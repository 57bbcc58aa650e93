"""`factledger demo` end to end: the whole product on the embedded default (SQLite ledger,
short-term memory, the sync worker, the in-memory backend with the ONNX embedder, the product's
proposer on the default extractor, recall), checked on what an agent would put in its prompt."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from factledger.api.cli import ledger as cli_ledger
from factledger.api.cli.main import app

QUOTES = ('"', "\u201c", "\u201d")


@dataclass
class Panel:
    title: str
    lines: list[str] = field(default_factory=list)

    @property
    def body(self) -> str:
        return " ".join(self.lines)

    def notes(self) -> list[str]:
        """The note lines: every bullet outside the verbatim excerpts section."""
        notes, in_excerpts = [], False
        for line in self.lines:
            if line.endswith(":") and not line.startswith("- "):
                in_excerpts = line == "Verbatim excerpts:"
            elif line.startswith("- ") and not in_excerpts:
                notes.append(line)
        return notes


def panels(text: str) -> list[Panel]:
    found: list[Panel] = []
    inside = False  # tables draw the same side borders: only read between a panel's corners
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("\u256d\u2500"):
            found.append(Panel(line.strip("\u256d\u2500\u256e ").rstrip("\u2500 ")))
            inside = True
        elif line.startswith("\u2570"):
            inside = False
        elif line.startswith("\u2502") and inside:
            content = line.strip("\u2502 ")
            # a long note wraps inside the panel: glue a continuation to its bullet (the
            # fence's markers are lines of their own)
            own_line = content.startswith(("- ", "<<<")) or content.endswith(":")
            if found[-1].lines and not own_line and not found[-1].lines[-1].startswith("<<<"):
                found[-1].lines[-1] += f" {content}"
            else:
                found[-1].lines.append(content)
    return found


@pytest.fixture(scope="module")
def demo_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    console = Console(width=240, record=True, color_system=None)
    patch = pytest.MonkeyPatch()
    patch.setattr(cli_ledger, "console", console)
    try:
        data_dir: Path = tmp_path_factory.mktemp("demo")
        result = CliRunner().invoke(app, ["demo", "--data-dir", str(data_dir)])
    finally:
        patch.undo()
    assert result.exit_code == 0, result.output
    return console.export_text()


def by_title(output: str, prefix: str) -> Panel:
    (panel,) = [p for p in panels(output) if p.title.startswith(prefix)]
    return panel


def test_recall_shows_supplier_b_current_with_a_as_previous(demo_output: str) -> None:
    january = by_title(demo_output, "January: recall(Which supplier")
    assert "2026-01-12, WhatsApp: works with Supplier A" in january.notes()[0]
    march = by_title(demo_output, "March: recall(Which supplier")
    assert march.notes()[0] == (
        "- 2026-03-03, voice call: works with Supplier B, previously Supplier A"
    )
    # by default the prompt carries notes only: no verbatim excerpt, no quotation
    assert "Verbatim excerpts:" not in march.lines
    assert not any(quote in march.body for quote in QUOTES)


def test_the_conditional_intent_keeps_its_condition_and_origin(demo_output: str) -> None:
    january = by_title(demo_output, "January: session_context")
    assert (
        "purchase intent: may consider switching to us next quarter (2026-Q2), "
        "if the pricing works (stated, unconfirmed)" in january.body
    )
    march = by_title(demo_output, "March: session_context")
    assert (
        "2026-01-12, WhatsApp: purchase intent: may consider switching to us next "
        "quarter (2026-Q2), if the pricing works" in march.body
    )
    assert "purchase_intent: confirmed profile field, stated by the lead" in demo_output
    intent = by_title(demo_output, "March: recall(Will you switch")
    assert any("if the pricing works" in note for note in intent.notes())


def test_the_rejected_inference_is_never_recalled(demo_output: str) -> None:
    assert "rejects the inferred" in demo_output  # the story did reject it
    for panel in panels(demo_output):
        assert "important factor" not in panel.body
        assert "insights" not in panel.body
    assert "inferred by a model" not in demo_output


def test_a_forgotten_field_is_gone_from_recall(demo_output: str) -> None:
    june = [p for p in panels(demo_output) if p.title.startswith("June")]
    assert any("complaints: Their deliveries kept arriving late" in p.body for p in june)
    assert any("arriving late" in note for p in june for note in p.notes())
    july = [p for p in panels(demo_output) if p.title.startswith("July")]
    assert len(july) == 2
    for panel in july:
        assert "arriving late" not in panel.body
        assert "complaints" not in panel.body
    # the question names Supplier A: on the calibrated scale the supplier's notes answer it,
    # the forgotten reason does not
    july_notes = by_title(demo_output, "July: recall").notes()
    assert all("Supplier" in note and "deliver" not in note for note in july_notes)
    # the product forgot the reason's memory with the field: no ForgetMemory
    assert "July: the sync forgot 1 backend memory with the field" in demo_output


def test_notes_carry_no_quotation_marks_and_the_withheld_message_never_appears(
    demo_output: str,
) -> None:
    notes = [note for panel in panels(demo_output) for note in panel.notes()]
    assert len(notes) > 10
    assert not [note for note in notes if any(mark in note for mark in QUOTES)]
    assert "safety filter: one message withheld" in demo_output
    assert "4111" not in demo_output
    # the ledger's tables are still printed after the story
    assert "Current profile (version 5" in demo_output
    assert "Supplier history" in demo_output
