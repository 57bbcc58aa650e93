"""The natural workload's wording sets written apart from its generator (ADR 0040: briefing;
ADR 0046: phone, a voice agent on a call): each written before its change's tuning, a third
held out, and none repeating the generator or another set."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.bench.natural.fresh import DEFAULT_WORDINGS, WORDING_SETS, load_wordings
from factledger.bench.natural.generate import DEV_WORDINGS, HELD_OUT_WORDINGS

ROOT = Path(__file__).resolve().parents[3]
# The fewest wordings each set was written with.
SMALLEST = {"briefing": 40, "phone": 60}


def _texts(wordings: dict[str, dict[str, list[str]]], part: str | None = None) -> set[str]:
    return {
        w.lower()
        for name, topics in wordings.items()
        if part in (None, name)
        for ws in topics.values()
        for w in ws
    }


def test_the_natural_workload_asks_every_set_of_fresh_wordings() -> None:
    assert WORDING_SETS["fresh"] == DEFAULT_WORDINGS
    assert set(WORDING_SETS) == {"fresh", *SMALLEST}
    assert all((ROOT / path).is_file() for path in WORDING_SETS.values())


@pytest.mark.parametrize("name", sorted(SMALLEST))
def test_each_set_is_large_enough_and_a_third_is_held_out(name: str) -> None:
    wordings = load_wordings(ROOT / WORDING_SETS[name])
    counts = {part: sum(map(len, topics.values())) for part, topics in wordings.items()}

    assert sum(counts.values()) >= SMALLEST[name]
    assert 0.3 <= counts["heldout"] / sum(counts.values()) <= 0.36
    assert set(wordings["dev"]) == set(wordings["heldout"]) == set(DEV_WORDINGS)


@pytest.mark.parametrize("name", sorted(SMALLEST))
def test_no_wording_repeats_the_generator_or_another_set(name: str) -> None:
    wordings = load_wordings(ROOT / WORDING_SETS[name])
    generated = {
        w.lower() for t in (DEV_WORDINGS, HELD_OUT_WORDINGS) for ws in t.values() for w in ws
    }
    others = set().union(
        *(
            _texts(load_wordings(ROOT / path))
            for other, path in WORDING_SETS.items()
            if other != name
        )
    )

    assert not _texts(wordings) & (generated | others)
    assert not _texts(wordings, "dev") & _texts(wordings, "heldout")
