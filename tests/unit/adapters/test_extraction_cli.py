"""`factledger extraction eval` prints the figures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factledger.api.cli import app
from factledger.api.log_setup import reset_logging

LABELLED_SET = Path(__file__).parents[2] / "data" / "extraction_set.yaml"


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    # The command configures process-wide logging onto the runner's stream, closed afterwards.
    yield
    reset_logging()


def test_eval_prints_every_figure_for_the_rule_extractor() -> None:
    result = CliRunner().invoke(
        app, ["extraction", "eval", "--set", str(LABELLED_SET), "--tag", "safety", "--verbose"]
    )
    assert result.exit_code == 0, result.output
    for figure in (
        "fact precision",
        "fact recall",
        "stated-vs-inferred accuracy",
        "update recall",
        "condition preservation",
        "safety violations            0",
    ):
        assert figure in result.output


def test_eval_of_the_llm_extractor_needs_an_endpoint() -> None:
    result = CliRunner().invoke(
        app, ["extraction", "eval", "--set", str(LABELLED_SET), "--extractor", "openai"]
    )
    assert result.exit_code != 0
