"""The fourth voice of wordings (ADR 0046): a voice agent on a call, written before that
change's tuning, apart from the generator and the other two sets, a third held out."""

from __future__ import annotations

from pathlib import Path

from factledger.bench.natural.fresh import WORDING_SETS, load_wordings
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


def test_there_are_at_least_sixty_phone_wordings_and_a_third_is_held_out() -> None:
    wordings = load_wordings(ROOT / WORDING_SETS["phone"])
    counts = {part: sum(map(len, topics.values())) for part, topics in wordings.items()}

    assert sum(counts.values()) >= 60
    assert 0.3 <= counts["heldout"] / sum(counts.values()) <= 0.36
    assert set(wordings["dev"]) == set(wordings["heldout"]) == set(DEV_WORDINGS)


def test_no_phone_wording_repeats_the_generator_or_another_set() -> None:
    phone = load_wordings(ROOT / WORDING_SETS["phone"])
    generated = {
        w.lower() for t in (DEV_WORDINGS, HELD_OUT_WORDINGS) for ws in t.values() for w in ws
    }
    others = set().union(
        *(
            _texts(load_wordings(ROOT / path))
            for name, path in WORDING_SETS.items()
            if name != "phone"
        )
    )

    assert not _texts(phone) & (generated | others)
    assert not _texts(phone, "dev") & _texts(phone, "heldout")
