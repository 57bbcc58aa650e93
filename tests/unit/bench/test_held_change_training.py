"""The lab's pair head on a held value (ADR 0137): its examples from the training labels, the
fit over an embedder, and the rule that picks its bar and threshold on kept-out cases. The
conversation below was written for this test."""

from __future__ import annotations

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.judgement.held_change import PairWidths, field_one_hot
from factledger.bench.judgement.conversations import Proposal, Span, TrainingCase, TrainingSession
from factledger.bench.judgement.held_change import (
    Offered,
    choose,
    choose_stepped,
    field_rates,
    fit,
    held_pairs,
    with_offered,
)
from factledger.bench.judgement.held_change_reads import held_sessions, read_examples
from factledger.bench.judgement.qa_reader.scoring import Read


def _proposal(line: int, words: str, name: str, at: int, updates: str | None = None) -> Proposal:
    return Proposal(Span(line, words, name, at), words, "stated", False, False, updates, None)


def _session(lines: list[str], *proposals: Proposal) -> TrainingSession:
    said = tuple(("subject" if n % 2 else "agent", text) for n, text in enumerate(lines))
    return TrainingSession(said, proposals, (), (), ())


FIRST = _session(
    ["What do you drive?", "A 2019 Corolla. Pay monthly, and skills: Excel."],
    _proposal(1, "A 2019 Corolla", "vehicle", 0),
    _proposal(1, "monthly", "payment", 20),
    _proposal(1, "Excel", "skills", 40),
)
SECOND = _session(
    ["Anything new?", "I sold it and bought a Kia Niro. Still paying monthly. Lovely weather."],
    _proposal(1, "a Kia Niro", "vehicle", 21, updates="2019 Corolla"),
    _proposal(1, "monthly", "payment", 48),
)
CASE = TrainingCase(
    "t-001",
    "insurance",
    "policyholder",
    {"vehicle": "the car", "payment": "how they pay", "skills": "list: what they know"},
    (),
    (FIRST, SECOND),
)


def test_a_later_sentence_is_a_change_only_where_it_states_another_value_of_a_held_field() -> None:
    pairs = list(held_pairs([CASE]))

    labels = {(p.pair.field, p.pair.sentence): p.changed for p in pairs}
    assert labels == {
        ("vehicle", "I sold it and bought a Kia Niro."): True,
        ("payment", "I sold it and bought a Kia Niro."): False,
        ("vehicle", "Still paying monthly."): False,
        ("payment", "Still paying monthly."): False,  # the same value said again
        ("vehicle", "Lovely weather."): False,
        ("payment", "Lovely weather."): False,
    }
    assert {p.pair.held for p in pairs if p.pair.field == "vehicle"} == {"A 2019 Corolla"}


async def test_the_fitted_head_reads_the_change_above_the_rest() -> None:
    pairs = list(held_pairs([CASE])) * 4

    head = await fit(HashingEmbedder(64), pairs, PairWidths(64, 16))

    p = await head.changed([q.pair for q in pairs[:6]])
    changed = [x for x, q in zip(p, pairs, strict=False) if q.changed]
    assert min(changed) > max(x for x, q in zip(p, pairs, strict=False) if not q.changed)


def _read(session: int, name: str, margin: float, line: int = 1) -> Read:
    return Read("t-001", session, line, name, 0, 5, "words", margin)


def test_an_offered_answer_joins_only_for_a_field_no_base_answer_states_over_its_bar() -> None:
    base = [_read(1, "payment", 6.0)]
    offers = [
        Offered(_read(1, "vehicle", -1.0), 0.9),
        Offered(_read(1, "vehicle", -3.0, line=3), 0.95),  # a lesser answer of the same field
        Offered(_read(1, "payment", 1.0), 0.9),  # the base states it already
        Offered(_read(1, "address", -6.0), 0.99),  # under the bar
        Offered(_read(1, "deductible", 2.0), 0.4),  # not read as a change
    ]

    kept = with_offered(base, offers, bar=-4.0, threshold=0.7)

    assert kept == [base[0], offers[0].read]


def test_the_rule_takes_most_updates_within_the_precision_given_and_recall_kept() -> None:
    base = {"precision": 0.80, "recall": 0.50, "updates": 0.40}
    figures = {
        (0.0, 0.9): {"precision": 0.80, "recall": 0.50, "updates": 0.42},
        (-4.0, 0.7): {"precision": 0.7985, "recall": 0.51, "updates": 0.46},
        (-8.0, 0.5): {"precision": 0.797, "recall": 0.53, "updates": 0.50},  # precision falls
        (-2.0, 0.6): {"precision": 0.80, "recall": 0.49, "updates": 0.48},  # recall falls
    }

    assert choose(figures, base) == (-4.0, 0.7)
    assert choose({(0.0, 0.9): base}, base) is None


def test_each_fields_rate_of_change_comes_from_its_labelled_pairs() -> None:
    pairs = list(held_pairs([CASE]))
    buckets = 64
    columns = field_one_hot(["vehicle", "payment"], buckets).argmax(axis=1)

    rates = field_rates(pairs, buckets)

    vehicle = [p.changed for p in pairs if p.pair.field == "vehicle"]
    assert rates[columns[0]] == sum(vehicle) / len(vehicle) > 0
    assert rates[columns[1]] == 0.0
    assert sorted(set(rates.tolist()) - {rates[columns[0]], 0.0}) == [-1.0]


def _answer(session: int, name: str, words: str, margin: float) -> Read:
    line = (FIRST, SECOND)[session].lines[1][1]
    at = line.index(words)
    return Read("t-001", session, 1, name, at, at + len(words), words, margin)


def test_the_readers_answer_of_a_held_field_is_a_change_only_over_a_labelled_change() -> None:
    reads = [
        _answer(1, "vehicle", "Kia Niro", -1.0),  # inside the labelled update
        _answer(1, "payment", "monthly", 6.0),  # the held value said again
        _answer(1, "vehicle", "Lovely weather", 0.5),  # no value of the field is expected
        _answer(1, "skills", "Kia", 7.0),  # a list field is never held
        _answer(0, "vehicle", "A 2019 Corolla", 8.0),  # nothing is held in the first session
    ]

    examples = read_examples(reads, list(held_sessions([CASE])))

    assert [(e.pair.span, e.pair.margin, e.changed) for e in examples] == [
        ("Kia Niro", -1.0, True),
        ("monthly", 6.0, False),
        ("Lovely weather", 0.5, False),
    ]
    assert examples[0].pair.sentence == "I sold it and bought a Kia Niro."
    assert {e.pair.held for e in examples} == {"A 2019 Corolla", "monthly"}


def test_the_stepped_rule_allows_0_002_of_precision_only_where_nothing_qualifies_at_0_001() -> None:
    base = {"precision": 0.80, "recall": 0.50, "updates": 0.40}
    close = {"precision": 0.7995, "recall": 0.50, "updates": 0.42}
    further = {"precision": 0.7985, "recall": 0.50, "updates": 0.46}

    assert choose_stepped({(0.0, 0.9): close, (-4.0, 0.7): further}, base) == ((0.0, 0.9), 0.001)
    assert choose_stepped({(-4.0, 0.7): further}, base) == ((-4.0, 0.7), 0.002)
    assert choose_stepped({(0.0, 0.9): base}, base) == (None, None)
