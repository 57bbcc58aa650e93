"""A seeded, generated suite of subjects whose facts change over many sessions.

Each subject gets made-up names no other subject shares, so a hit can be attributed by its
text alone, whatever ids the engine assigns. The sentences follow the default extraction
guidance's phrasing, so the self-hosted extractor and any LLM extractor both read them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

SYLLABLES = ("kor", "van", "tel", "mir", "dra", "quen", "bal", "sol", "zep", "ryn", "thu", "lom")
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Session:
    document_id: str
    occurred_at: datetime
    lines: tuple[str, ...]  # the subject's messages; an agent line precedes each


@dataclass(frozen=True, slots=True)
class SlotCheck:
    """A question whose answer changed: the current value must outrank the stale ones."""

    slot: str
    question: str
    current: str
    stale: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Subject:
    key: str
    sessions: tuple[Session, ...]
    checks: tuple[SlotCheck, ...]
    forget_token: str  # the allergy the subject later asks to be forgotten
    forget_question: str
    expire_token: str  # a liking that expires
    expire_question: str
    inference_questions: tuple[str, ...]
    tokens: tuple[str, ...]  # every made-up name of this subject, for leak detection
    leak_question: str  # a question naming this subject's current supplier


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(syllables))


def _unique(rng: random.Random, used: set[str], syllables: int = 3) -> str:
    while True:
        word = _word(rng, syllables)
        if word not in used:
            used.add(word)
            return word


def generate_subject(index: int, rng: random.Random, used: set[str], budgets: int) -> Subject:
    """One subject: setup, supplier switch (reason and derivation), move, budgets, team, like."""
    supplier_a = f"{_unique(rng, used).title()} Freight"
    supplier_b = f"{_unique(rng, used).title()} Logistics"
    city_a, city_b = _unique(rng, used).title(), _unique(rng, used).title()
    allergen, hobby = _unique(rng, used), _unique(rng, used)
    amounts = [f"{10 * (step + 1) + index % 7}k" for step in range(budgets)]
    lines: list[tuple[str, ...]] = [
        (
            f"We work with {supplier_a}.",
            f"I live in {city_a}.",
            f"Our budget is {amounts[0]} a month.",
            f"I am allergic to {allergen} seeds.",
        ),
        (f"We switched to {supplier_b} because the deliveries kept arriving late.",),
        (f"I moved to {city_b}.",),
        *((f"Our budget is now {amount} a month.",) for amount in amounts[1:]),
        ("We now have 40 employees and we are hiring.", f"I really enjoy {hobby} dancing."),
    ]
    sessions = tuple(
        Session(f"life-{index}-s{number}", START + timedelta(days=7 * number), session_lines)
        for number, session_lines in enumerate(lines)
    )
    checks: tuple[SlotCheck, ...] = (
        SlotCheck("supplier", "Which supplier do they work with?", supplier_b, (supplier_a,)),
        SlotCheck("location", "Where do they live?", city_b, (city_a,)),
    )
    if budgets > 1:
        checks += (SlotCheck("budget", "What is their budget?", amounts[-1], tuple(amounts[:-1])),)
    return Subject(
        key=f"life-{index}",
        sessions=sessions,
        checks=checks,
        forget_token=allergen,
        forget_question="What are they allergic to?",
        expire_token=hobby,
        expire_question="What do they enjoy doing?",
        inference_questions=(
            "Does delivery reliability matter to them?",
            "Is their organisation growing?",
        ),
        tokens=(supplier_a, supplier_b, city_a, city_b, allergen, hobby),
        leak_question=f"Do they work with {supplier_b} in {city_b}?",
    )


def generate_suite(subjects: int, *, seed: int, budgets: int = 4) -> list[Subject]:
    """`subjects` subjects with `budgets` budget sessions each (one setup, then updates)."""
    rng = random.Random(seed)
    used: set[str] = set()
    return [generate_subject(index, rng, used, budgets) for index in range(subjects)]
