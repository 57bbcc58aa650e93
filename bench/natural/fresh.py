"""Fresh wordings asked of the natural-question set's subjects (ADR 0036).

The set's own questions come from its generator's templates; tuning recall on them alone
would fit those templates. `tests/data/fresh_natural_wordings.yaml` holds agent-style
wordings written apart from the generator, in a development and a held-out part. Each
wording is asked of every subject: the subject appears twice, once per part, with the same
sessions, so the set's scorer (`run_natural`) and its per-part tally serve unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from factledger.bench.natural.score import PARTS

DEFAULT_WORDINGS = Path("tests/data/fresh_natural_wordings.yaml")
# Each set of wordings written apart from the generator, by the name its rows carry in the
# report: the first fresh set (ADR 0036), a third voice written before ADR 0040's tuning and a
# fourth (a voice agent on a call) written before ADR 0046's.
WORDING_SETS = {
    "fresh": DEFAULT_WORDINGS,
    "briefing": Path("tests/data/briefing_natural_wordings.yaml"),
    "phone": Path("tests/data/phone_natural_wordings.yaml"),
}


def load_wordings(path: Path) -> dict[str, dict[str, list[str]]]:
    """Part ("dev", "heldout") -> topic -> wordings."""
    with path.open(encoding="utf-8") as handle:
        wordings: dict[str, dict[str, list[str]]] = yaml.safe_load(handle)
    unknown = set(wordings) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown parts in the wordings file: {sorted(unknown)}")
    return wordings


def _answers(subject: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Topic -> the answer (and stale value) the set's own questions give for this subject."""
    answers: dict[str, dict[str, str]] = {}
    for q in subject["questions"]:
        answers.setdefault(q["topic"], {"answer": q["answer"], **_stale(q)})
    return answers


def _stale(question: dict[str, Any]) -> dict[str, str]:
    return {"stale": question["stale"]} if question.get("stale") else {}


def _animal(subject: dict[str, Any]) -> str:
    """The kind of the subject's pet, as the first session says it ("My cat is called ...")."""
    for session in subject["sessions"]:
        for role, text in session["lines"]:
            if role == "subject" and text.startswith("My ") and " is called " in text:
                return str(text[3:].split(" is called ", 1)[0])
    return "pet"


def fresh_subjects(
    subjects: Sequence[dict[str, Any]], wordings: dict[str, dict[str, list[str]]]
) -> list[dict[str, Any]]:
    """Every subject once per part, asked that part's fresh wordings."""
    fresh = []
    for part, by_topic in wordings.items():
        for subject in subjects:
            answers = _answers(subject)
            first_name = subject["name"].split()[0]
            questions = [
                {
                    "topic": topic,
                    "text": text.format(name=first_name, animal=_animal(subject)),
                    **answers[topic],
                }
                for topic, texts in by_topic.items()
                for text in texts
            ]
            fresh.append({**subject, "id": f"{subject['id']}-{part}", "part": part,
                          "questions": questions})  # fmt: skip
    return fresh
