"""`factledger-lab extraction eval`, `locomo-coverage` and `phrasings` print the figures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from factledger.api.log_setup import reset_logging
from factledger.bench.cli.main import app

LABELLED_SET = Path(__file__).parents[2] / "data" / "extraction_set.yaml"
PHRASING_SET = Path(__file__).parents[2] / "data" / "phrasing_set.yaml"


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


def test_locomo_coverage_counts_the_evidence_turns_facts_cite(tmp_path: Path) -> None:
    conversation = {
        "speaker_a": "Kim",
        "speaker_b": "Lee",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Kim", "dia_id": "D1:1", "text": "Hey Lee!"},
            {"speaker": "Lee", "dia_id": "D1:2", "text": "I went hiking in the Alps yesterday."},
            {"speaker": "Kim", "dia_id": "D1:3", "text": "I adopted a puppy last week."},
        ],
    }
    qa = [{"question": "q", "answer": "a", "evidence": ["D1:2", "D1:1"], "category": 1}]
    path = tmp_path / "locomo-shaped.json"
    path.write_text(json.dumps([{"conversation": conversation, "qa": qa}]), encoding="utf-8")
    result = CliRunner().invoke(app, ["extraction", "locomo-coverage", "--path", str(path)])
    assert result.exit_code == 0, result.output
    assert "evidence turns cited       0.500 (1/2)" in result.output
    assert "subject turns cited        0.667" in result.output


def test_eval_prints_one_line_per_guidance_with_dev_and_held_out_apart() -> None:
    sets = LABELLED_SET.parent / "extraction_sets"
    result = CliRunner().invoke(
        app,
        ["extraction", "eval", "--set", str(LABELLED_SET), "--guidance-sets", str(sets)],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for name in ("default", "sales_discovery", "support_ticket"):
        (line,) = [x for x in lines if x.startswith(f"{name} ")]
        assert " dev P " in line
        assert " held-out P " in line


def test_phrasings_prints_all_dev_and_held_out_and_lists_only_dev_problems() -> None:
    result = CliRunner().invoke(
        app, ["extraction", "phrasings", "--set", str(PHRASING_SET), "--tag", "reason", "--verbose"]
    )
    assert result.exit_code == 0, result.output
    for line in ("all: cases", "dev: cases", "heldout: cases", "reasons linked", "seconds per"):
        assert line in result.output
    labelled = yaml.safe_load(PHRASING_SET.read_text(encoding="utf-8"))
    held = [c["id"] for c in labelled if "heldout" in c["tags"] and "reason" in c["tags"]]
    assert held
    assert not any(f"{case}:" in result.output for case in held)


def test_phrasings_needs_a_model_with_a_url() -> None:
    result = CliRunner().invoke(
        app, ["extraction", "phrasings", "--set", str(PHRASING_SET), "--base-url", "http://x/v1"]
    )
    assert result.exit_code != 0
