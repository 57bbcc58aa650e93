"""An evaluation set's dev cases converted to the reader's training conversations, and the
held floor's rule on the kept-out cases (ADR 0130); no model is read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from factledger.bench.judgement.conversations import load_training_cases
from factledger.bench.judgement.qa_reader.from_evalset import (
    AGENT,
    BY_VALUE,
    ITEMS,
    LOCATED,
    NOWHERE,
    SEVERAL,
    convert,
    list_items,
    shortest_stretch,
    value_stretch,
    write,
)
from factledger.bench.judgement.qa_reader.held_floor import choose_held, held_grid

LIST_LINE = "A garden, and parking for two cars. No busy main roads please"
PROPOSALS = [
    {"field": "budget", "keywords": ["420"], "updates": "400k"},
    {"field": "must_haves", "keywords": ["garden", "parking"]},
    {"field": "deal_breakers", "keywords": ["busy main"]},
    {"field": "mortgage_status", "keywords": ["pre-approved"]},
]
CASES = [
    {
        "id": "real_estate-001",
        "domain": "real_estate",
        "kind": "home_buyer",
        "writer": "Q",
        "sessions": [
            {
                "at": "2026-01-12T10:00:00Z",
                "lines": [
                    {"role": "agent", "text": "Budget?"},
                    {"role": "subject", "text": "Up to 420,000 now. My sister wants 900k, lol"},
                    {"role": "agent", "text": "You're pre-approved, right?"},
                    {"role": "subject", "text": "yep"},
                    {"role": "subject", "text": LIST_LINE},
                ],
                "expect": {
                    "proposals": PROPOSALS,
                    "not_proposed": [
                        {"keywords": ["900k"], "field": "budget", "why": "third_party"}
                    ],
                },
            },
            {
                "at": "2026-02-12T10:00:00Z",
                "lines": [
                    {"role": "subject", "text": "three bedrooms"},
                    {"role": "subject", "text": "Bedrooms: 3, and 3 of us"},
                    {"role": "subject", "text": "3 kids"},
                ],
                "expect": {
                    "proposals": [
                        {"field": "bedrooms", "keywords": ["3"]},
                        {"field": "preferred_area", "keywords": ["Millbrook"]},
                    ]
                },
            },
        ],
    }
]


def _set(root: Path, half: str = "dev") -> Path:
    directory = root / "blindx" / half
    directory.mkdir(parents=True)
    (directory / "cases-real_estate.yaml").write_text(yaml.safe_dump(CASES), encoding="utf-8")
    return directory


def test_the_shortest_stretch_holds_every_keyword_in_whole_words() -> None:
    assert shortest_stretch("Up to 420,000 now.", ["420"]) == (6, 13)
    line = "garden yes, garden and parking"
    begin, end = shortest_stretch(line, ["garden", "parking"]) or (0, 0)
    assert line[begin:end] == "garden and parking"
    assert shortest_stretch("I'm 1420 away", ["420"]) is None  # a hit starts a word


def test_a_list_stretch_cut_at_its_separators_gives_each_item() -> None:
    stretch = shortest_stretch(LIST_LINE, ["garden", "parking"])
    assert stretch is not None
    items = [LIST_LINE[b:e] for b, e in list_items(LIST_LINE, stretch, ["garden", "parking"])]
    assert items == ["garden", "parking"]
    one = shortest_stretch(LIST_LINE, ["parking", "two"])
    assert one is not None
    assert list_items(LIST_LINE, one, ["parking", "two"]) == [one]


def test_dev_cases_convert_to_training_conversations(tmp_path: Path) -> None:
    converted = convert([_set(tmp_path)])
    assert converted.proposals[LOCATED] == 2  # budget, deal_breakers
    assert converted.proposals[ITEMS] == 1  # must_haves: garden, parking
    assert converted.proposals[AGENT] == 1  # pre-approved: the agent's words, a "yep"
    assert converted.proposals[SEVERAL] == 1  # "3" in two subject lines: not guessed
    assert converted.proposals[NOWHERE] == 1
    assert (converted.sessions_kept, converted.sessions_left_out) == (1, 1)
    out = tmp_path / "converted"
    assert write(converted, out) == {"real_estate": 1}
    loaded = load_training_cases([out])
    assert not loaded.dropped
    [case] = loaded.cases
    assert case.id == "Q:real_estate-001"
    assert case.is_list("must_haves")
    [session] = case.sessions
    spans = {(p.span.field, p.span.line, p.span.text) for p in session.proposals}
    assert spans == {
        ("budget", 1, "420,000"),
        ("must_haves", 4, "garden"),
        ("must_haves", 4, "parking"),
        ("deal_breakers", 4, "busy main"),
    }
    assert [p.updates for p in session.proposals if p.span.field == "budget"] == ["400k"]
    [third] = session.not_proposed
    assert (third.span.line, third.span.text, third.span.field) == (1, "900k", "budget")
    first = (out / "cases-real_estate.yaml").read_bytes()
    write(convert([_set(tmp_path / "again")]), out)
    assert (out / "cases-real_estate.yaml").read_bytes() == first  # deterministic


def test_the_value_spans_where_the_line_says_it_around_the_keywords() -> None:
    line = "Our new guy is Piotr Nowicki, he starts Monday"
    stretch = shortest_stretch(line, ["Piotr"])
    assert stretch is not None
    begin, end = value_stretch(line, stretch, "piotr nowicki") or (0, 0)
    assert line[begin:end] == "Piotr Nowicki"  # widened past the comma's word, then trimmed
    assert value_stretch(line, stretch, "Piotr N.") is None  # not said word for word
    assert value_stretch(line, stretch, "Monday") is None  # said, but not around the keyword
    assert value_stretch(line, stretch, "  ") is None


def test_with_value_spans_a_proposal_is_taught_the_values_own_words(tmp_path: Path) -> None:
    budget, must_haves, deal_breakers, mortgage = PROPOSALS
    valued = [
        {**budget, "value": "Up to 420,000"},
        {**must_haves, "value": "garden, parking"},  # not said so: cut into items as before
        {**deal_breakers, "value": "busy main roads"},
        mortgage,
    ]
    case = {
        **CASES[0],
        "sessions": [
            {
                **CASES[0]["sessions"][0],
                "expect": {**CASES[0]["sessions"][0]["expect"], "proposals": valued},
            }
        ],
    }
    directory = tmp_path / "blindv" / "dev"
    directory.mkdir(parents=True)
    (directory / "cases-real_estate.yaml").write_text(yaml.safe_dump([case]), encoding="utf-8")
    converted = convert([directory], by_value=True)
    assert converted.proposals[BY_VALUE] == 2
    out = tmp_path / "converted"
    write(converted, out)
    [session] = load_training_cases([out]).cases[0].sessions
    spans = {(p.span.field, p.span.text) for p in session.proposals}
    assert spans == {
        ("budget", "Up to 420,000"),
        ("must_haves", "garden"),
        ("must_haves", "parking"),
        ("deal_breakers", "busy main roads"),
    }
    assert convert([directory]).proposals[BY_VALUE] == 0  # keywords' spans unless asked


def test_a_held_out_half_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="held-out"):
        convert([_set(tmp_path, "heldout")])


def test_the_held_floor_rule() -> None:
    assert held_grid(5.5) == (4.5, 3.5, 1.5, 0.0)
    assert held_grid(1.5) == (0.5, 0.0)

    def row(p: float, r: float, u: float) -> dict[str, float | int]:
        return {"precision": p, "recall": r, "updates": u}

    figures = {
        5.5: row(0.80, 0.50, 0.40),
        4.5: row(0.796, 0.51, 0.45),
        3.5: row(0.790, 0.52, 0.60),  # more updates, too much precision given
        0.0: row(0.80, 0.49, 0.70),  # recall down
    }
    assert choose_held(figures, 5.5) == 4.5
    assert choose_held({5.5: figures[5.5], 3.5: figures[3.5]}, 5.5) is None
