"""`factledger-lab bench import` in miniature: the figures it prints add up (SQLite only; the
PostgreSQL run is the same code on another store)."""

from __future__ import annotations

from typer.testing import CliRunner

from factledger.bench.cli.main import app
from factledger.bench.importing import run_store
from factledger.testing.history import HistoryShape


async def test_the_import_figures_count_what_was_imported() -> None:
    figures = await run_store("sqlite", HistoryShape(3, 2, 4), follow_up=True)
    assert (figures.messages, figures.sessions) == (24, 6)
    assert figures.events == 3 + 6  # registrations and sessions; proposals come after
    assert figures.proposals is not None
    assert figures.proposals > 0
    text = "\n".join(figures.lines())
    assert "messages/s" in text
    assert "ledger events/s" in text
    assert "load average" in text


def test_the_command_refuses_an_unknown_store() -> None:
    result = CliRunner().invoke(app, ["bench", "import", "--stores", "oracle"])
    assert result.exit_code != 0
