"""The lab's `reach`: where a session's lines hold an expected value's keywords, which bounds
what spans of the subject's lines can be scored as found."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from factledger.bench.evalsets.cases import Case, Expected, Session
from factledger.bench.evalsets.reach import counted, main, place

LINES = (
    ("agent", "So that's 52 Rue Saint-Maur, Paris?"),
    ("subject", "Yes. We buy from Boxmart, and my wife and I decide."),
    ("subject", "The budget is forty thousand."),
)


def expected(*keywords: str) -> Expected:
    return Expected("f", keywords, "stated", None, False, False, None)


def session(*proposals: Expected) -> Session:
    return Session(datetime(2026, 1, 1, tzinfo=UTC), "chat", LINES, proposals, (), (), ())


@pytest.mark.parametrize(
    ("keywords", "where"),
    [
        (("boxmart",), "a_subject_line"),
        (("40000",), "a_subject_line"),  # the scorer reads numbers said in words
        (("Saint-Maur", "52"), "an_agent_line_only"),
        (("Boxmart", "forty"), "across_lines_only"),
        (("household", "two adults"), "no_line"),  # "my wife and I", as the writer put it
    ],
)
def test_each_value_is_placed_where_its_keywords_are_said(
    keywords: tuple[str, ...], where: str
) -> None:
    assert place(session(), expected(*keywords)) == where


def test_counts_add_up_to_the_expected_values() -> None:
    case = Case(
        "c-1", "T", "sales", "lead", (), (session(expected("boxmart"), expected("two adults")),), ()
    )
    assert counted([case]) == {
        "expected": 2,
        "a_subject_line": 1,
        "an_agent_line_only": 0,
        "across_lines_only": 0,
        "no_line": 1,
    }


def test_a_held_out_half_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main([str(tmp_path / "blind" / "heldout")])


def test_the_command_prints_each_half_and_their_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = {"role": "subject", "text": "We buy from Boxmart."}
    case = {
        "id": "sales-001",
        "writer": "T",
        "domain": "sales",
        "kind": "lead",
        "sessions": [
            {
                "at": "2026-01-12T10:00:00Z",
                "channel": "chat",
                "lines": [said],
                "expect": {
                    "proposals": [
                        {"field": "supplier", "value": "Boxmart", "keywords": ["Boxmart"]},
                        {"field": "team_size", "value": "12", "keywords": ["12"]},
                    ]
                },
            }
        ],
    }
    halves = [tmp_path / "a" / "dev", tmp_path / "b" / "dev"]
    for half in halves:
        half.mkdir(parents=True)
        (half / "cases-sales.yaml").write_text(yaml.safe_dump([case]), encoding="utf-8")
    # Two wrong proposals in the first half: a supplier cut short, a team size in words.
    wrong = [
        {"set": str(halves[0]), "case": "sales-001", "session": 0, "field": f, "kind": kind}
        for f, kind in [("supplier", "other_words"), ("team_size", "other_words")]
    ] + [{"set": str(halves[0]), "case": "sales-001", "session": 0, "field": "x", "kind": "x"}]
    detail = tmp_path / "wrong.json"
    detail.write_text(json.dumps(wrong), encoding="utf-8")

    main([*map(str, halves), "--wrong", str(detail)])

    rows = json.loads(capsys.readouterr().out)
    assert [row["set"] for row in rows] == [*map(str, halves), "all"]
    assert rows[-1] == {
        "set": "all",
        "expected": 4,
        "a_subject_line": 2,
        "an_agent_line_only": 0,
        "across_lines_only": 0,
        "no_line": 2,
        "wrong_in_other_words": {
            "a_subject_line": 1,
            "an_agent_line_only": 0,
            "across_lines_only": 0,
            "no_line": 1,
        },
    }


def test_a_detail_of_other_halves_is_refused(tmp_path: Path) -> None:
    half = tmp_path / "a" / "dev"
    half.mkdir(parents=True)
    detail = tmp_path / "wrong.json"
    detail.write_text(json.dumps([{"set": "elsewhere/dev", "kind": "other_words"}]))
    with pytest.raises(SystemExit):
        main([str(half), "--wrong", str(detail)])
