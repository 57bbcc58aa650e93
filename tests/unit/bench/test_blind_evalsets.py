"""The blind-set scorer: a case played through the product in process, and what it counts."""

from __future__ import annotations

import copy
import hashlib
from dataclasses import replace
from pathlib import Path
from uuid import uuid4

import pytest
import yaml

from factledger.adapters.judgement.span_verifier import SPAN_VERIFIER_FILE
from factledger.adapters.judgement.value_fit import PACKAGED_VALUE_FIT, ValueFitIntegrityError
from factledger.bench.evalsets import score
from factledger.bench.evalsets.__main__ import main, score_directory
from factledger.bench.evalsets.cases import Answer, parse_cases
from factledger.bench.evalsets.keyword_spellings import counted
from factledger.bench.evalsets.run import CaseRun
from factledger.bench.evalsets.score import holds_all, score_answers, score_run
from factledger.bench.proposal_eval import Made
from factledger.domain.proposal import Proposal
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import ListValue, TextValue

CASE = [
    {
        "id": "sales-001",
        "writer": "T",
        "domain": "sales",
        "kind": "lead",
        "sessions": [
            {
                "at": "2026-01-12T10:00:00Z",
                "channel": "chat",
                "lines": [
                    {"role": "agent", "text": "Who do you buy your packaging from today?"},
                    {
                        "role": "subject",
                        "text": "We buy from Boxmart. Our budget is 40,000 dollars.",
                    },
                ],
                "expect": {
                    "proposals": [
                        {"field": "supplier", "value": "Boxmart", "keywords": ["Boxmart"]},
                        {"field": "budget", "value": "40,000 dollars", "keywords": ["40"]},
                        {"field": "team_size", "value": "12", "keywords": ["12"]},
                    ],
                    "not_proposed": [{"keywords": ["Boxmart"], "why": "agent_said"}],
                },
                "questions": [{"text": "Who supplies them?", "answer_keywords": ["Boxmart"]}],
            },
            {
                "at": "2026-03-12T10:00:00Z",
                "channel": "phone",
                "lines": [
                    {
                        "role": "subject",
                        "text": "We switched to Cartonia last month. Please delete my phone "
                        "number from your records.",
                    }
                ],
                "expect": {
                    "proposals": [
                        {
                            "field": "supplier",
                            "value": "Cartonia",
                            "keywords": ["Cartonia"],
                            "updates": "Boxmart",
                        }
                    ],
                    "forget_requests": [{"field": None, "keywords": ["phone"]}],
                },
                "questions": [
                    {
                        "text": "Which vendor do they get boxes from now?",
                        "answer_keywords": ["Cartonia"],
                        "stale_keywords": ["Boxmart"],
                    }
                ],
            },
        ],
        "reviews": [{"after_session": 0, "field": "budget", "decision": "reject"}],
    }
]
ANSWERS = [
    {
        "id": "ans-1",
        "domain": "sales",
        "change": {"field": "supplier", "value": "Cartonia"},
        "question": "You buy from Cartonia now, right?",
        "reply": reply,
        "label": label,
    }
    for reply, label in (("Yes, since March.", True), ("Nope, still Boxmart.", False))
]


def _set(tmp_path: Path) -> Path:
    (tmp_path / "cases-sales.yaml").write_text(yaml.safe_dump(CASE), encoding="utf-8")
    (tmp_path / "answers-sales.yaml").write_text(yaml.safe_dump(ANSWERS), encoding="utf-8")
    return tmp_path


async def test_a_case_is_scored_on_proposals_updates_questions_and_answers(
    tmp_path: Path,
) -> None:
    result = await score_directory(_set(tmp_path), "rule", "none", "bare")

    sales = result["cases"]["sales"]
    assert (sales["expected"], sales["made"]) == (4, 3)  # nobody said the team size
    assert (sales["recall"], sales["precision"]) == (0.75, 1.0)
    assert (sales["updates"], sales["updates_recognised"]) == (1, 1.0)
    assert sales["not_proposed_violations"] == 0  # the matched proposal is no violation
    assert (sales["forget_sessions"], sales["forgets_noticed"]) == (1, 0.0)  # no judgement
    assert (sales["questions"], sales["right_note_top3"], sales["stale_top3"]) == (2, 1.0, 0)
    answers = result["answers"]
    assert (answers["n"], answers["false_yes"]) == (2, 1)  # taken as given: every reply a yes
    assert answers["false_declines"] == 0


def test_a_reply_that_is_not_a_no_read_as_one_is_a_false_decline() -> None:
    labels = ["yes", "neither", "no", "yes"]
    scores = score_answers(
        [
            Answer(f"an-{n}", "sales", "supplier", "A", "Q?", "r", label)
            for n, label in enumerate(labels)
        ],
        ["no", "no", "no", "yes"],
    )
    assert (scores.false_declines, scores.false_yes) == (2, 0)
    assert scores.as_dict()["false_declines"] == 2


async def test_the_learned_judgement_notices_the_forget_request_and_the_no(
    tmp_path: Path,
) -> None:
    result = await score_directory(_set(tmp_path), "learned", "learned", "bare")

    sales = result["cases"]["sales"]
    assert (sales["forgets_noticed"], sales["forget_false_alarms"]) == (1.0, 0)
    confusion = result["answers"]["confusion"]
    assert result["answers"]["false_yes"] == 0
    assert confusion["no->no"] == 1
    # "Yes, since March." is a yes the answer judge may not be sure enough of (its bar admits
    # no training reply that is not a yes): then it stays pending, and is never a no.
    assert confusion["yes->yes"] + confusion["yes->neither"] == 1


def _proposal(field: str, operation: Operation, value: str | None) -> Proposal:
    return Proposal(
        change_id=uuid4(),
        field=field,
        operation=operation,
        value=None if value is None else TextValue(value),
        origin=Origin.STATED,
        proposed_by=Actor(ActorKind.MODEL, "model"),
        based_on_version=0,
    )


def test_a_forget_request_is_scored_as_placed_on_its_field_and_never_as_a_proposal() -> None:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][1]["expect"]["forget_requests"] = [{"field": "phone", "keywords": []}]
    (case,) = parse_cases(raw)
    made = [
        Made(0, _proposal("supplier", Operation.SET, "Boxmart")),
        Made(1, _proposal("phone", Operation.FORGET, None)),
    ]

    tally = score_run(CaseRun(case, made), {0: [], 1: [0]}).as_dict()

    assert (tally["made"], tally["precision"]) == (1, 1.0)
    assert tally["forget_requests_made"] == 1
    assert (tally["forget_fields"], tally["forgets_placed"]) == (1, 1.0)
    assert tally["forgets_misplaced"] == 0
    assert (tally["forgets_noticed"], tally["forget_false_alarms"]) == (1.0, 0)
    elsewhere = [Made(1, _proposal("budget", Operation.FORGET, None))]
    misplaced = score_run(CaseRun(case, elsewhere), {1: [0]}).as_dict()
    assert (misplaced["forgets_placed"], misplaced["forgets_misplaced"]) == (0.0, 1)


def test_a_field_request_for_a_request_that_names_no_field_is_counted_apart() -> None:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][1]["expect"]["forget_requests"] = [{"field": None, "keywords": ["ex"]}]
    (case,) = parse_cases(raw)
    on_a_field = [Made(1, _proposal("budget", Operation.FORGET, None))]

    tally = score_run(CaseRun(case, on_a_field), {1: [0]}).as_dict()

    assert (tally["forget_fields"], tally["forgets_misplaced"]) == (0, 0)
    assert tally["forgets_on_unnamed"] == 1
    assert score_run(CaseRun(case, []), {1: [0]}).as_dict()["forgets_on_unnamed"] == 0


def test_a_request_naming_items_is_counted_and_right_when_it_names_the_writers_item() -> None:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][1]["expect"]["forget_requests"] = [
        {"field": "competitors", "keywords": ["Vatly"]}
    ]
    (case,) = parse_cases(raw)
    named = replace(
        _proposal("competitors", Operation.FORGET, None), value=ListValue(("Vatly Ltd",))
    )
    other = replace(named, field="complaints", value=ListValue(("late",)))

    tally = score_run(CaseRun(case, [Made(1, named), Made(1, other)]), {1: [0]}).as_dict()

    assert (tally["forget_item_requests"], tally["forget_items_right"]) == (2, 1)
    assert tally["made"] == 0  # never a value proposal


def test_a_true_fact_said_word_for_word_counts_whole_only_when_proposed_whole() -> None:
    (case,) = parse_cases(copy.deepcopy(CASE))
    keyword_only = [
        Made(0, _proposal("supplier", Operation.SET, "Boxmart")),
        Made(0, _proposal("budget", Operation.SET, "40,000")),
    ]
    tally = score_run(CaseRun(case, keyword_only)).as_dict()
    # Both said as written ("Boxmart", "40,000 dollars"); only the supplier proposed whole.
    assert (tally["matched"], tally["values_said"], tally["values_whole"]) == (2, 2, 1)
    whole = [
        replace(m, proposal=replace(m.proposal, value=TextValue("40,000 Dollars")))
        if m.proposal.field == "budget"
        else m
        for m in keyword_only
    ]
    assert score_run(CaseRun(case, whole)).as_dict()["whole_values"] == 1.0
    # A fact not matched, or whose value no subject line says as written, counts in neither.
    assert score_run(CaseRun(case, [])).as_dict()["values_said"] == 0


def test_the_words_of_values_and_those_padding_a_whole_value_are_counted() -> None:
    (case,) = parse_cases(copy.deepcopy(CASE))
    padded = [
        Made(0, _proposal("supplier", Operation.SET, "we buy from Boxmart")),
        Made(0, _proposal("budget", Operation.SET, "40,000")),
    ]
    tally = score_run(CaseRun(case, padded)).as_dict()

    # Four words and one; the supplier's value, said as "Boxmart", padded by three words; a
    # value shorter than the writer's pads nothing.
    assert (tally["value_words"], tally["words_per_value"], tally["padded_words"]) == (5, 2.5, 3)


def test_a_number_said_in_words_holds_the_digits_of_the_expected_value() -> None:
    (case,) = parse_cases(copy.deepcopy(CASE))
    said = [Made(0, _proposal("budget", Operation.SET, "forty thousand dollars"))]
    other = [Made(0, _proposal("budget", Operation.SET, "thirty thousand dollars"))]

    assert score_run(CaseRun(case, said)).matched == 1
    assert score_run(CaseRun(case, other)).matched == 0


def test_a_count_of_two_said_in_words_holds_its_digit_and_one_stays_a_word() -> None:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][0]["expect"]["proposals"] = [
        {"field": "team_size", "value": "2", "keywords": ["2"]},
        {"field": "decision_maker", "value": "1", "keywords": ["1"]},
    ]
    (case,) = parse_cases(raw)
    made = [
        Made(0, _proposal("team_size", Operation.SET, "just two of us")),
        Made(0, _proposal("decision_maker", Operation.SET, "no one else signs")),
    ]

    tally = score_run(CaseRun(case, made))

    assert (tally.matched, tally.made_right) == (1, 1)


def test_a_list_proposal_holds_every_expected_item_it_names_and_is_one_right_proposal() -> None:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][0]["expect"]["proposals"] = [
        {"field": "competitors", "value": "Boxmart", "keywords": ["Boxmart"]},
        {"field": "competitors", "value": "Cartonia", "keywords": ["Cartonia"]},
        {"field": "supplier", "value": "Boxmart", "keywords": ["Boxmart"]},
        {"field": "supplier", "value": "Boxmart", "keywords": ["Boxmart"]},
    ]
    (case,) = parse_cases(raw)
    made = [
        Made(0, _proposal("competitors", Operation.SET, "Boxmart, Cartonia")),
        Made(0, _proposal("supplier", Operation.SET, "Boxmart")),
        Made(0, _proposal("budget", Operation.SET, "lots")),
    ]

    tally = score_run(CaseRun(case, made))

    # A single-valued field's proposal still matches one expected value only.
    assert (tally.matched, tally.expected) == (3, 4 + 1)
    assert (tally.made, tally.made_right) == (3, 2)
    assert tally.violations == 0  # the matched list proposal is no violation


async def test_as_served_a_line_the_session_path_withholds_is_never_recorded(
    tmp_path: Path,
) -> None:
    """ADR 0161: the HTTP path's safety filter withholds a line whole, with every fact in it;
    scored as served, the facts of that line are missed."""
    case = copy.deepcopy(CASE)
    first = case[0]["sessions"][0]["lines"][1]
    first["text"] += " The admin password is Zq7!vR2#pLm9."
    (tmp_path / "cases-sales.yaml").write_text(yaml.safe_dump(case), encoding="utf-8")

    plain = await score_directory(tmp_path, "rule", "none", "bare")
    served = await score_directory(tmp_path, "rule", "none", "bare", as_served=True)

    assert served["as_served"] is True
    assert plain["cases"]["sales"]["made"] == 3
    assert served["cases"]["sales"]["made"] == 1  # only the second session's supplier


async def test_as_served_a_withheld_request_to_forget_is_not_noticed(tmp_path: Path) -> None:
    case = copy.deepcopy(CASE)
    second = case[0]["sessions"][1]["lines"][0]
    second["text"] += " The admin password is Zq7!vR2#pLm9."
    (tmp_path / "cases-sales.yaml").write_text(yaml.safe_dump(case), encoding="utf-8")

    plain = await score_directory(tmp_path, "learned", "learned", "bare")
    served = await score_directory(tmp_path, "learned", "learned", "bare", as_served=True)

    assert plain["cases"]["sales"]["forgets_noticed"] == 1.0
    assert served["cases"]["sales"]["forgets_noticed"] == 0.0


def test_keywords_that_spell_one_word_ask_for_it_once() -> None:
    """A writer who lists a word's spellings ("3" and "three") asks for the word, which a value
    can hold in only one of them (ADR 0222)."""
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][0]["expect"]["proposals"] = [
        {"field": "team_size", "value": "3", "keywords": ["3", "three"]},
        {"field": "name", "value": "Björn Eriksson", "keywords": ["Björn", "Bjorn"]},
        {"field": "budget", "value": "7,500", "keywords": ["7,500", "7500"]},
        {"field": "supplier", "value": "Boxmart", "keywords": ["Boxmart", "Cartonia"]},
    ]
    (case,) = parse_cases(raw)
    made = [
        Made(0, _proposal("team_size", Operation.SET, "Three of us")),
        Made(0, _proposal("name", Operation.SET, "Bjorn Eriksson")),
        Made(0, _proposal("budget", Operation.SET, "about 7500 a year")),
        # Keywords that are two words are both still asked for.
        Made(0, _proposal("supplier", Operation.SET, "Boxmart")),
    ]

    tally = score_run(CaseRun(case, made))

    assert (tally.matched, tally.made_right) == (3, 3)


def test_a_value_holds_a_keyword_without_its_accents_or_its_thousands_separator() -> None:
    assert holds_all("Rubén, 555-0178", ["Ruben"])
    assert holds_all("Ruben", ["Rubén"])
    assert holds_all("Excess of 1,000 is fine", ["1000"])
    assert holds_all("a two-bed flat", ["2"])
    assert not holds_all("no one else signs", ["1"])  # "one" in a value stays a word
    assert not holds_all("Quit eight years ago", ["former", "quit"])  # not one word's spellings


def test_the_rule_before_adr_0222_is_replayed_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][0]["expect"]["proposals"] = [
        {"field": "team_size", "value": "3", "keywords": ["3", "three"]}
    ]
    (case,) = parse_cases(raw)
    made = [Made(0, _proposal("team_size", Operation.SET, "Three of us"))]
    assert score_run(CaseRun(case, made)).matched == 1

    monkeypatch.setattr(score, "keyword_reading", score.holds_as_written)

    assert score_run(CaseRun(case, made)).matched == 0  # no value holds both spellings


def test_the_spellings_count_finds_keywords_that_spell_one_word_twice() -> None:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][0]["expect"]["proposals"] = [
        {"field": "team_size", "value": "3", "keywords": ["3", "three"]},
        {"field": "name", "value": "Björn", "keywords": ["Björn", "bjorn"]},
        {"field": "policy_type", "value": "home and car", "keywords": ["home", "car"]},
    ]
    (case,) = parse_cases(raw)

    counts = counted([case])

    assert counts["expected_spelt_twice"] == 2


async def test_a_value_fit_file_of_the_labs_fit_is_scored_in_place_of_the_packaged_one(
    tmp_path: Path,
) -> None:
    own = tmp_path / "value-fit.npz"
    own.write_bytes(PACKAGED_VALUE_FIT.read_bytes())
    graph = PACKAGED_VALUE_FIT.parent / SPAN_VERIFIER_FILE  # the file names it, beside it
    (tmp_path / SPAN_VERIFIER_FILE).write_bytes(graph.read_bytes())
    sha256 = hashlib.sha256(own.read_bytes()).hexdigest()

    result = await score_directory(
        _set(tmp_path), "learned", "learned", "bare", value_fit_file=(own, sha256)
    )

    assert result["value_fit_file"] == "value-fit.npz"
    with pytest.raises(ValueFitIntegrityError):
        await score_directory(
            _set(tmp_path), "learned", "learned", "bare", value_fit_file=(own, "0" * 64)
        )


def test_a_value_fit_file_without_its_pin_is_refused() -> None:
    with pytest.raises(SystemExit):
        main(["some/dir", "--extractor", "learned", "--value-fit-file", "value-fit.npz"])
