"""The QA reader's pieces that need no torch: pairs, tokens, decoding and scoring."""

from __future__ import annotations

import random

import numpy as np

from factledger.adapters.embedding.onnx.model_files import TOKENIZER
from factledger.adapters.judgement.qa_reader.decode import answers, widen
from factledger.adapters.judgement.qa_reader.inputs import MARKER
from factledger.bench.judgement.conversations import Proposal, Span, TrainingCase, TrainingSession
from factledger.bench.judgement.qa_reader.fields_pass import (
    FieldAsked,
    FieldsTokens,
    field_word_positions,
)
from factledger.bench.judgement.qa_reader.pairs import kept_out, pairs_of_case
from factledger.bench.judgement.qa_reader.questions import question_for
from factledger.bench.judgement.qa_reader.scoring import (
    GoldKeywords,
    Read,
    proposed,
    score_keywords,
)
from factledger.bench.judgement.qa_reader.tokens import PairTokens, load_tokenizer

LINE = "sure, I'm Ada Quill and I work at Fernbrook Dairy"


def _case() -> TrainingCase:
    lines = (("agent", "Who am I speaking with?"), ("subject", LINE), ("subject", "thanks!"))
    stated = Proposal(
        Span(1, "Ada Quill", "name", LINE.index("Ada")),
        "Ada Quill",
        "stated",
        False,
        False,
        None,
        None,
    )
    session = TrainingSession(lines, (stated,), (), (), ())
    fields = {"name": "full name", "employer": "where they work", "skills": "list: skills"}
    return TrainingCase("c-1", "sales", "lead", fields, (), (session,))


def test_every_field_is_asked_of_every_subject_line_and_only_the_stated_one_has_an_answer() -> None:
    pairs = pairs_of_case(_case())

    assert len(pairs) == 2 * 3
    answered = [(p.asked.line, p.field, p.spans) for p in pairs if p.spans]
    begin = LINE.index("Ada")
    assert answered == [(1, "name", ((begin, begin + len("Ada Quill")),))]
    assert pairs[0].asked.agent_before == "Who am I speaking with?"
    assert pairs[-1].asked.agent_before == ""
    assert [p.is_list for p in pairs[:3]] == [False, False, True]


def test_kept_out_cases_are_chosen_by_id_alone() -> None:
    chosen = [kept_out(f"case-{n}") for n in range(400)]

    assert chosen == [kept_out(f"case-{n}") for n in range(400)]
    assert 20 < sum(chosen) < 80


def test_a_question_names_the_field_and_may_carry_its_meaning() -> None:
    assert question_for("job_title") == "what is the person's job title?"
    assert question_for("skills", "list: what they can do").endswith("(what they can do)")


def test_gold_tokens_cover_the_span_and_nothing_before_the_line_can_answer() -> None:
    tokens = PairTokens(load_tokenizer(TOKENIZER))
    begin = LINE.index("Fernbrook")
    [encoded] = tokens.encode("employer?", LINE, "Who am I speaking with?", [(begin, len(LINE))])

    first = encoded.first_line_token
    covered = (
        encoded.offsets[encoded.starts[0] - first][0],
        encoded.offsets[encoded.ends[0] - first][1],
    )
    assert LINE[covered[0] : covered[1]] == "Fernbrook Dairy"
    assert encoded.ids[first - 1] == tokens.tokenizer.token_to_id("[SEP]")
    assert len(encoded.ids) == len(encoded.types)


def test_a_long_line_is_read_in_windows_and_a_span_goes_to_those_that_hold_it() -> None:
    tokens = PairTokens(load_tokenizer(TOKENIZER), max_tokens=24)
    line = " ".join(f"word{n}" for n in range(40)) + " Fernbrook Dairy"
    begin = line.index("Fernbrook")
    windows = tokens.encode("employer?", line, "", [(begin, len(line))])

    assert len(windows) > 1
    assert all(len(w.ids) <= 24 for w in windows)
    assert not windows[0].starts
    assert windows[-1].starts


def test_decoding_keeps_a_span_only_when_it_beats_no_answer_by_the_margin() -> None:
    offsets = [(0, 3), (4, 8), (9, 14)]
    line = "Ada Quil works"
    start = np.array([1.0, 0, 0, 5.0, 0, 0], dtype=np.float32)  # [CLS] q [SEP] then the line
    end = np.array([1.0, 0, 0, 0, 5.0, 0], dtype=np.float32)

    [found] = answers(start, end, 3, offsets, line, margin=0.0, many=False)
    assert line[found.start : found.end] == "Ada Quil"
    assert found.margin == 8.0
    assert answers(start, end, 3, offsets, line, margin=9.0, many=False) == []


def test_a_list_field_gets_every_span_that_clears_the_margin_none_overlapping() -> None:
    offsets = [(0, 4), (5, 9), (10, 14)]
    line = "milk eggs nuts"
    start = np.array([0.0, 4, -2, 3.9], dtype=np.float32)  # "eggs" below no-answer
    end = np.array([0.0, 4, -2, 3.9], dtype=np.float32)

    found = answers(start, end, 1, offsets, line, margin=1.0, many=True)
    assert sorted(line[a.start : a.end] for a in found) == ["milk", "nuts"]


def test_a_spread_list_measures_each_item_by_the_mass_of_all_the_lines_items() -> None:
    offsets = [(0, 4), (5, 9), (10, 14)]
    line = "milk eggs nuts"
    # Three items sharing the mass equally: each is log 3 under what one item would hold.
    start = np.array([0.0, 2, 2, 2], dtype=np.float32)
    end = np.array([0.0, 2, 2, 2], dtype=np.float32)

    assert answers(start, end, 1, offsets, line, margin=5.0, many=True) == []
    found = answers(start, end, 1, offsets, line, margin=5.0, many=True, spread=True)
    assert found
    assert all(abs(a.margin - (4 + 2 * np.log(3))) < 1e-6 for a in found)
    # One item alone gets no lift: its mass is its own.
    alone = np.array([0.0, 2, -30, -30], dtype=np.float32)
    [one] = answers(alone, alone, 1, offsets, line, margin=0.0, many=True, spread=True)
    assert line[one.start : one.end] == "milk"
    assert abs(one.margin - 4.0) < 1e-6


def test_widening_never_leaves_half_a_word() -> None:
    assert widen("Fernbrook Dairy", 2, 9) == (0, 9)
    assert widen("Fernbrook Dairy", 10, 12) == (10, 15)


def _read(field: str, value: str, margin: float, line: int = 1) -> Read:
    return Read("c", 0, line, field, 0, len(value), value, margin)


def test_a_session_proposes_a_single_fields_best_answer_and_every_list_answer() -> None:
    reads = [
        _read("name", "Ada", 2.0),
        _read("name", "Ada Quill", 3.0, line=2),
        _read("skills", "milking", 1.5),
        _read("skills", "cheese", 2.5),
        _read("employer", "Fernbrook", 0.5),
    ]

    kept = proposed(reads, {"skills": True}, floor=1.0)

    assert sorted(r.value for r in kept) == ["Ada Quill", "cheese", "milking"]


def test_keyword_scoring_matches_one_to_one_within_a_field() -> None:
    reads = [_read("name", "Ada Quill", 1.0), _read("employer", "Quill & Co", 1.0)]
    gold = [GoldKeywords("c", 0, "name", ("quill",)), GoldKeywords("c", 0, "name", ("Ada",))]

    figures = score_keywords(reads, gold)

    assert (figures["made"], figures["expected"], figures["precision"]) == (2, 2, 0.5)
    assert figures["recall"] == 0.5


def test_one_pass_asks_every_field_each_with_its_marker_and_its_own_gold() -> None:
    tokens = FieldsTokens(load_tokenizer(TOKENIZER))
    begin = LINE.index("Fernbrook")
    fields = [
        FieldAsked("name", False, (), (False,) * 4),
        FieldAsked("employer", False, ((begin, len(LINE)),), (False,) * 4),
    ]

    [encoded] = tokens.encode(fields, LINE, "Who am I speaking with?", random.Random(1))

    marker = tokens.tokenizer.token_to_id(MARKER)
    assert [encoded.ids[m] for m in encoded.markers] == [marker, marker]
    by_field = dict(zip((f.field for f in encoded.fields), encoded.starts, strict=True))
    assert by_field["name"] == ()
    start = by_field["employer"][0] - encoded.first_line_token
    assert LINE[encoded.offsets[start][0] :].startswith("Fernbrook")


def test_each_field_asks_with_its_marker_and_its_own_words_up_to_the_next_marker() -> None:
    tokens = FieldsTokens(load_tokenizer(TOKENIZER))
    fields = [
        FieldAsked("job_title", False, (), (False,) * 4),
        FieldAsked("name", False, (), (False,) * 4),
    ]

    [encoded] = tokens.encode(fields, LINE, "", None)

    words = {
        f.field: tokens.tokenizer.decode([encoded.ids[p] for p in positions[1:]])
        for f, positions in zip(encoded.fields, field_word_positions(encoded), strict=True)
    }
    assert [encoded.ids[p[0]] for p in field_word_positions(encoded)] == [
        tokens.tokenizer.token_to_id(MARKER)
    ] * 2
    assert words == {"job_title": "job title", "name": "name"}
