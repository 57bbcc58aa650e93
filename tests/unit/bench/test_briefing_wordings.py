"""The third voice of wordings (ADR 0040): written before that change's tuning, apart from the
set's generator and from the first fresh set, a third held out, and asked in the natural
workload beside them."""

from __future__ import annotations

from pathlib import Path

from factledger.bench.natural.fresh import DEFAULT_WORDINGS, WORDING_SETS, load_wordings
from factledger.bench.natural.generate import DEV_WORDINGS, HELD_OUT_WORDINGS

ROOT = Path(__file__).resolve().parents[3]


def _texts(wordings: dict[str, dict[str, list[str]]], part: str | None = None) -> set[str]:
    return {
        w.lower()
        for name, topics in wordings.items()
        if part in (None, name)
        for ws in topics.values()
        for w in ws
    }


def test_the_natural_workload_asks_both_sets_of_fresh_wordings() -> None:
    assert WORDING_SETS["fresh"] == DEFAULT_WORDINGS
    assert set(WORDING_SETS) == {"fresh", "briefing", "phone"}
    assert all((ROOT / path).is_file() for path in WORDING_SETS.values())


def test_there_are_at_least_forty_briefing_wordings_and_a_third_is_held_out() -> None:
    wordings = load_wordings(ROOT / WORDING_SETS["briefing"])
    counts = {part: sum(map(len, topics.values())) for part, topics in wordings.items()}

    assert sum(counts.values()) >= 40
    assert 0.3 <= counts["heldout"] / sum(counts.values()) <= 0.36
    assert set(wordings["dev"]) == set(wordings["heldout"]) == set(DEV_WORDINGS)


def test_no_briefing_wording_repeats_the_generator_or_the_first_fresh_set() -> None:
    briefing = load_wordings(ROOT / WORDING_SETS["briefing"])
    generated = {
        w.lower() for t in (DEV_WORDINGS, HELD_OUT_WORDINGS) for ws in t.values() for w in ws
    }
    fresh = _texts(load_wordings(ROOT / DEFAULT_WORDINGS))

    assert not _texts(briefing) & (generated | fresh)
    assert not _texts(briefing, "dev") & _texts(briefing, "heldout")
