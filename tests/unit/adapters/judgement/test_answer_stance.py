"""The answer-stance heads (ADR 0121): the file reads back as written under its pin, is
refused otherwise, and an answer is kept only when both heads clear their bars."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.judgement.answer_stance import (
    FIT_CLASSES,
    PACKAGED_ANSWER_STANCE,
    PACKAGED_ANSWER_STANCE_SHA256,
    AnswerStanceIntegrityError,
    StanceHeads,
    Vectors,
    answer_features,
    stance_features,
    without_value,
)
from factledger.adapters.judgement.heads import Head
from factledger.application.judgement.stance import ReaderAnswer, Stance

DIMENSION = 4
ANSWER = ReaderAnswer("We don't use Acme.", "Acme", "supplier", 8.0, many=False)


def _vectors(n: int) -> Vectors:
    one = np.full((n, DIMENSION), 0.5, np.float32)
    return Vectors(one, one, one, one)


def _heads(stance_bias: list[float], answer_bias: list[float]) -> StanceHeads:
    width_s = stance_features(_vectors(1), [ANSWER]).shape[1]
    width_a = answer_features(_vectors(1), [ANSWER]).shape[1]
    stance = Head(
        np.zeros((width_s, 3), np.float32),
        np.array(stance_bias, np.float32),
        ("states", "hedged", "denies"),
    )
    answer = Head(
        np.zeros((width_a, 2), np.float32), np.array(answer_bias, np.float32), FIT_CLASSES
    )
    return StanceHeads(stance, answer, "model-x", stance_bar=0.3, answer_bar=0.4)


def test_the_value_is_taken_out_of_its_sentence_as_one_placeholder_word() -> None:
    assert without_value("We don't use Acme.", "Acme") == "We don't use it."
    assert without_value("We don't use Acme.", "Globex") == "We don't use Acme."


def test_the_file_reads_back_as_written_under_its_pin(tmp_path: Path) -> None:
    path = tmp_path / "stance.npz"
    written = _heads([0.0, 0.0, 3.0], [0.0, 0.0])
    sha256 = written.save(path)

    loaded = StanceHeads.load(path, sha256)

    assert (loaded.model_id, loaded.stance_bar, loaded.answer_bar) == ("model-x", 0.3, 0.4)
    assert loaded.stance.classes == ("states", "hedged", "denies")
    with pytest.raises(AnswerStanceIntegrityError):
        StanceHeads.load(path, "0" * 64)


def test_an_answer_is_kept_only_when_both_heads_clear_their_bars() -> None:
    denied = _heads([0.0, 0.0, 3.0], [2.0, 0.0])  # the field's words, in a denial
    not_the_field = _heads([3.0, 0.0, 0.0], [-2.0, 0.0])  # stated, but not this field's
    stated = _heads([3.0, 0.0, 0.0], [2.0, 0.0])

    readings = [h.readings(_vectors(1), [ANSWER])[0] for h in (denied, not_the_field, stated)]

    assert [(r.stance, r.kept) for r in readings] == [
        (Stance.DENIES, False),
        (Stance.NONE, False),
        (Stance.STATES, True),
    ]


def test_the_shipped_file_matches_its_pin_and_has_the_stances_it_keeps() -> None:
    heads = StanceHeads.load(PACKAGED_ANSWER_STANCE, PACKAGED_ANSWER_STANCE_SHA256)

    assert {"states", "hedged", "denies", "third_party"} <= set(heads.stance.classes)
    assert 0.0 < heads.answer_bar < 1.0
