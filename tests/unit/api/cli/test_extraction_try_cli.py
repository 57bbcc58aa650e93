"""`factledger extraction try` shows what the rule extractor makes of a few messages."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from factledger.api.cli.main import app
from factledger.api.log_setup import reset_logging


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    # The command configures process-wide logging onto the runner's stream, closed afterwards.
    yield
    reset_logging()


def test_try_shows_the_facts_of_a_few_messages() -> None:
    result = CliRunner().invoke(
        app,
        [
            "extraction",
            "try",
            "agent: Hi, I'm Ana. Would you like to upgrade to the Pro plan?",
            "Maybe next quarter, if the pricing works.",
            "--date",
            "2026-03-10T12:00:00",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "f0 [intent:upgrade_to_pro_plan] - sources=[0, 1]" in result.output
    assert "condition: if the pricing works" in result.output
    assert "Ana" not in result.output


def test_try_reads_messages_as_the_conversation_type_given() -> None:
    said = ["The export keeps failing on Windows 11."]
    plain = CliRunner().invoke(app, ["extraction", "try", *said])
    typed = CliRunner().invoke(
        app, ["extraction", "try", *said, "--conversation-type", "support_ticket"]
    )
    assert plain.exit_code == 0, plain.output
    assert typed.exit_code == 0, typed.output
    assert "[issue]" in typed.output
    assert "[issue]" not in plain.output
