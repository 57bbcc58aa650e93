"""Forget-line sets (ADR 0165): the writers' format checked, each message's sentences marked
as the product cuts them, the halves split by id, and lines scored as `said_requests` reads
them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml

from factledger.application.judgement.types import Judgement, Statement
from factledger.bench.evalsets.forget_lines import (
    ForgetLineError,
    load_lines,
    main,
    request_pieces,
    score,
    split,
)
from factledger.bench.evalsets.line_files import in_dev_half

ITEMS = [
    {
        "id": "f-1",
        "language": "en",
        "domain": "insurance",
        "text": "The renewal is fine. Could you delete my old work address from your file?",
        "request": True,
        "request_sentence": "Could you delete my old work address from your file?",
        "why_not": "",
    },
    {
        "id": "f-2",
        "language": "es",
        "domain": "clinic",
        "text": "Por favor borren mi número antiguo de su sistema.",
        "request": True,
        "request_sentence": "Por favor borren mi número antiguo de su sistema.",
        "why_not": "",
    },
    {
        "id": "f-3",
        "language": "en",
        "domain": "real estate",
        "text": "Take the pool off my must-haves, we can live without one.",
        "request": False,
        "request_sentence": "",
        "why_not": "a change of preference",
    },
    {
        "id": "f-4",
        "language": "en",
        "domain": "support",
        "text": "I forgot my password again. Can you reset it?",
        "request": False,
        "request_sentence": "",
        "why_not": "forgot as memory",
    },
]


class WordJudge:
    """Flags a sentence holding "delete" or "borren" (a test double of the learned judge)."""

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        return [
            Judgement(Statement.SELF, 1.0, False, "delete" in s or "borren" in s, False)
            for s in sentences
        ]


def _write(directory: Path, items: list[dict[str, object]], name: str = "lines-01.yaml") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(yaml.safe_dump(items, allow_unicode=True), encoding="utf-8")
    return path


def test_a_request_sentence_that_is_not_the_texts_words_is_refused_naming_the_item(
    tmp_path: Path,
) -> None:
    broken = [{**ITEMS[0], "request_sentence": "Could you delete my address?"}]
    with pytest.raises(ForgetLineError, match="f-1: request_sentence"):
        load_lines([_write(tmp_path, broken)])
    with pytest.raises(ForgetLineError, match="given twice: f-1"):
        load_lines([_write(tmp_path, [ITEMS[0], ITEMS[0]])])


def test_only_the_sentence_that_asks_is_marked_as_the_product_cuts_the_message(
    tmp_path: Path,
) -> None:
    asking, spanish, pool, _ = load_lines([_write(tmp_path, ITEMS)])
    assert request_pieces(asking) == [
        ("The renewal is fine.", False),
        ("Could you delete my old work address from your file?", True),
    ]
    assert request_pieces(spanish) == [(spanish.text, True)]
    assert request_pieces(pool) == [(pool.text, False)]


def test_split_puts_each_item_in_the_half_its_id_names_and_keeps_every_item(
    tmp_path: Path,
) -> None:
    many = [{**ITEMS[i % 4], "id": f"f-{i}"} for i in range(40)]
    _write(tmp_path / "writer", many)
    counts = split(tmp_path / "writer", tmp_path / "set")
    dev = load_lines([tmp_path / "set" / "dev"])
    held = load_lines([tmp_path / "set" / "heldout"])
    assert counts == {"dev": len(dev), "heldout": len(held)}
    assert sorted(x.id for x in dev + held) == sorted(str(i["id"]) for i in many)
    assert all(in_dev_half(x.id) for x in dev)
    assert not any(in_dev_half(x.id) for x in held)
    assert dev
    assert held


def test_score_counts_requests_noticed_and_near_misses_flagged(tmp_path: Path) -> None:
    flagged_miss = {
        **ITEMS[3],
        "id": "f-5",
        "text": "Please delete the draft I sent you by mistake.",
    }
    missed = {
        **ITEMS[0],
        "id": "f-6",
        "text": "Scrub my number from your notes.",
        "request_sentence": "Scrub my number from your notes.",
    }
    lines = load_lines([_write(tmp_path, [*ITEMS, flagged_miss, missed])])
    detail: list[dict[str, object]] = []

    tally = asyncio.run(score(lines, WordJudge(), detail))

    assert (tally.requests, tally.noticed, tally.found) == (3, 2, 2)
    assert (tally.near_misses, tally.false_alarms) == (3, 1)
    assert (tally.requests_english, tally.noticed_english) == (2, 1)
    figures = tally.figures()
    assert figures["noticed_rate"] == 0.667
    assert figures["noticed_rate_other"] == 1.0
    assert sorted(str(d["id"]) for d in detail) == ["f-5", "f-6"]


def test_detail_is_refused_on_a_held_out_half(tmp_path: Path) -> None:
    _write(tmp_path / "heldout", ITEMS)
    with pytest.raises(SystemExit, match="dev halves only"):
        main(["score", str(tmp_path / "heldout"), "--detail", str(tmp_path / "d.json")])
