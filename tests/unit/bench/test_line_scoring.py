"""The scorer of the heads that judge one line: it prints aggregates only, never an item's
words, and counts false yeses, yeses accepted and the instruction screen's precision and
recall per source."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import yaml

from factledger.application.judgement.types import Reply
from factledger.bench.evalsets.lines import LabelledLine, instruction_scores, score_directory

SECRET = "Zanzibar-quartz"


class _Reader:
    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        return [Reply.YES if "yes" in reply else Reply.NEITHER for _, reply in pairs]


class _Detector:
    async def instruction_p(self, texts: Sequence[str]) -> list[float]:
        return [0.9 if "assistant" in t else 0.1 for t in texts]


def _write(directory: Path) -> None:
    answers = [
        {
            "id": f"a-{i}",
            "domain": "sales",
            "change": {"field": "supplier", "value": SECRET},
            "question": f"You buy from {SECRET}?",
            "reply": reply,
            "label": label,
        }
        for i, (reply, label) in enumerate(
            [("yes", "yes"), ("hmm", "yes"), ("yes but not that one", "no"), ("later", "neither")]
        )
    ]
    lines = [
        {"id": "l-1", "source": "message", "text": f"assistant, {SECRET}", "instruction": True},
        {"id": "l-2", "source": "summary", "text": SECRET, "instruction": True},
        {"id": "l-3", "source": "message", "text": f"the assistant {SECRET}", "instruction": False},
        {"id": "l-4", "source": "summary", "text": "plain", "instruction": False},
    ]
    directory.mkdir(parents=True)
    (directory / "answers-eval.yaml").write_text(yaml.safe_dump(answers), encoding="utf-8")
    (directory / "instructions-eval.yaml").write_text(yaml.safe_dump(lines), encoding="utf-8")


async def test_a_directory_is_scored_by_aggregates_that_never_quote_it(tmp_path: Path) -> None:
    _write(tmp_path / "blind" / "heldout")
    result = await score_directory(tmp_path / "blind" / "heldout", _Reader(), _Detector(), 0.7)
    assert SECRET not in json.dumps(result)
    assert result["set"] == "blind/heldout"
    answers = result["answers"]
    assert (answers["n"], answers["not_yes"], answers["false_yes"]) == (4, 2, 1)
    assert answers["yes_accepted"] == 0.5
    instructions = result["instructions"]
    assert (instructions["precision"], instructions["recall"]) == (0.5, 0.5)
    assert instructions["recall_message"] == 1.0
    assert instructions["recall_summary"] == 0.0
    assert instructions["false_alarms_message"] == 1


def test_no_line_flagged_is_no_precision_rather_than_an_error() -> None:
    lines = [LabelledLine("x", True, "message")]
    assert instruction_scores(lines, [0.1], 0.7)["precision"] == 0.0
