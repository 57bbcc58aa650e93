"""The natural-question set: the checked-in file is what the generator makes, and it can
measure what it claims to (held-out part, stale values, other subjects' values)."""

from __future__ import annotations

from pathlib import Path

import yaml

from factledger.bench.natural.generate import generate
from factledger.bench.natural.score import (
    DEFAULT_SET,
    foreign_values,
    holds_foreign,
    own_values,
    questions_of,
)

ROOT = Path(__file__).resolve().parents[3]


def test_the_checked_in_set_is_the_generators_output() -> None:
    stored = yaml.safe_load((ROOT / DEFAULT_SET).read_text(encoding="utf-8"))

    assert stored == generate(stored["seed"])


def test_the_set_is_large_enough_and_about_a_third_is_held_out() -> None:
    subjects = generate()["subjects"]
    questions = [q for s in subjects for q in questions_of(s)]
    held_out = [q for q in questions if q.part == "heldout"]

    assert len(questions) >= 150
    assert 0.3 <= len(held_out) / len(questions) <= 0.36
    assert sum(q.paraphrase for q in questions) >= len(questions) // 2


def test_held_out_questions_are_worded_apart_from_the_dev_ones() -> None:
    subjects = generate()["subjects"]
    dev = {q.text for s in subjects if s["part"] == "dev" for q in questions_of(s)}
    held = {q.text for s in subjects if s["part"] == "heldout" for q in questions_of(s)}

    assert not dev & held


def test_changed_values_have_a_stale_one_and_values_belong_to_one_subject() -> None:
    subjects = generate()["subjects"]
    first = subjects[0]
    stale = [q for q in questions_of(first) if q.stale is not None]

    assert stale
    assert all(q.stale != q.answer for q in stale)
    own = {q.answer.lower() for q in questions_of(first)}
    assert not own & set(foreign_values(subjects, first["id"]))


def test_a_value_inside_the_subjects_own_value_is_not_another_subjects() -> None:
    own = ["juniper bags", "lucca"]

    assert not holds_foreign("works with juniper bags", ["juniper", "soy"], own)
    assert holds_foreign("their dog is called juniper", ["juniper"], own)
    assert not holds_foreign("works at soylent", ["soy"], ["soylent"])
    assert not holds_foreign("likes soya milk", ["soy"], [])  # whole words only


def test_every_subject_owns_the_values_it_is_asked_about() -> None:
    subjects = generate()["subjects"]
    for subject in subjects:
        own = set(own_values(subjects, subject["id"]))
        asked = {q.answer.lower() for q in questions_of(subject) if q.topic != "budget"}
        assert asked <= own
        assert not own & set(foreign_values(subjects, subject["id"]))
