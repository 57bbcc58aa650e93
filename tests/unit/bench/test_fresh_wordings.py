"""The fresh wordings (ADR 0036): written apart from the set's generator, a third held out,
asked of every subject with the set's answers; and the no-answer measure, which must be able
to count a wrong note."""

from __future__ import annotations

from pathlib import Path

from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.bench.natural.fresh import DEFAULT_WORDINGS, fresh_subjects, load_wordings
from factledger.bench.natural.generate import DEV_WORDINGS, HELD_OUT_WORDINGS, generate
from factledger.bench.natural.no_answer import run_no_answer, unanswerable_notes
from factledger.bench.natural.score import questions_of

ROOT = Path(__file__).resolve().parents[3]


def _wordings() -> dict[str, dict[str, list[str]]]:
    return load_wordings(ROOT / DEFAULT_WORDINGS)


def test_there_are_at_least_sixty_wordings_and_a_third_is_held_out() -> None:
    wordings = _wordings()
    counts = {part: sum(map(len, topics.values())) for part, topics in wordings.items()}

    assert sum(counts.values()) >= 60
    assert 0.3 <= counts["heldout"] / sum(counts.values()) <= 0.36


def test_no_fresh_wording_is_one_of_the_generators() -> None:
    generated = {
        w for table in (DEV_WORDINGS, HELD_OUT_WORDINGS) for ws in table.values() for w in ws
    }
    fresh = {w for topics in _wordings().values() for ws in topics.values() for w in ws}

    assert not generated & fresh
    dev = {w for ws in _wordings()["dev"].values() for w in ws}
    held = {w for ws in _wordings()["heldout"].values() for w in ws}
    assert not dev & held


def test_every_subject_is_asked_every_wording_with_the_sets_answers() -> None:
    subjects = generate()["subjects"]
    fresh = fresh_subjects(subjects, _wordings())
    first = [s for s in fresh if s["id"].startswith(subjects[0]["id"])]
    answers = {q["topic"]: q["answer"] for q in subjects[0]["questions"]}

    assert len(fresh) == 2 * len(subjects)
    assert {s["part"] for s in first} == {"dev", "heldout"}
    for subject in first:
        for question in questions_of(subject):
            assert question.answer == answers[question.topic]
            assert "{" not in question.text


def test_an_unanswerable_note_holds_neither_the_answer_nor_its_stale_value() -> None:
    texts = ["works at Globex", "used to work at Initech", "moved to Lucca", "cat is Pixel", "x"]

    assert unanswerable_notes(texts, "Globex", "Initech") == ["moved to Lucca", "cat is Pixel", "x"]


async def test_the_no_answer_measure_counts_a_note_shown_with_the_answer_gone(
    backend: InMemoryMemoryBackend,
) -> None:
    subject = generate()["subjects"][0]
    # Asked at threshold 0, whatever is left of the subject's facts is shown: every question
    # must count a wrong note; at a bar nothing reaches, none may.
    shown = await run_no_answer(backend, "t0", [subject], threshold=0.0)
    none = await run_no_answer(backend, "t1", [subject], threshold=1.01)

    part = subject["part"]
    assert shown.parts[part].asked == len(subject["questions"])
    assert shown.as_dict()[part]["wrong_note_rate"] == 1.0
    assert none.as_dict()[part]["wrong_note_rate"] == 0.0
