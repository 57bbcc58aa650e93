"""The heads file: written and read back the same, refused when its SHA-256 or a head differs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.judgement.heads import (
    HEAD_NAMES,
    OPTIONAL_HEADS,
    Head,
    Heads,
    HeadsIntegrityError,
)
from factledger.adapters.judgement.judge import PACKAGED_HEADS, PACKAGED_HEADS_SHA256


def _heads(names: tuple[str, ...] = HEAD_NAMES) -> Heads:
    rng = np.random.default_rng(1)
    head = Head(rng.normal(size=(6, 2)).astype(np.float32), np.zeros(2, np.float32), ("a", "b"))
    return Heads(dict.fromkeys(names, head), "model-x", 16, 0.6)


def test_heads_read_back_as_written_under_their_pinned_sha256(tmp_path: Path) -> None:
    path = tmp_path / "heads.npz"
    sha256 = _heads().save(path)

    loaded = Heads.load(path, sha256)

    assert (loaded.model_id, loaded.buckets, loaded.yes_min) == ("model-x", 16, 0.6)
    x = np.ones((3, 6), np.float32)
    np.testing.assert_allclose(
        loaded["answer"].probabilities(x), _heads()["answer"].probabilities(x), rtol=1e-6
    )
    assert loaded["statement"].classes == ("a", "b")


def test_a_heads_file_whose_sha256_differs_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "heads.npz"
    _heads().save(path)

    with pytest.raises(HeadsIntegrityError, match="sha256"):
        Heads.load(path, "0" * 64)


def test_a_heads_file_missing_a_head_or_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "heads.npz"
    sha256 = _heads(HEAD_NAMES[:-1]).save(path)

    with pytest.raises(HeadsIntegrityError, match="no head field"):
        Heads.load(path, sha256)
    with pytest.raises(HeadsIntegrityError, match="not readable"):
        Heads.load(tmp_path / "absent.npz", None)


def test_the_shipped_heads_match_their_pin() -> None:
    heads = Heads.load(PACKAGED_HEADS, PACKAGED_HEADS_SHA256)

    assert set(HEAD_NAMES) <= set(heads.heads) <= {*HEAD_NAMES, *OPTIONAL_HEADS}
    assert heads["answer"].classes == ("yes", "no", "neither")
    assert 0.0 < heads.field_min < 1.0
    assert 0.0 < heads.forget_min < 1.0


def test_a_head_no_reader_reads_is_left_out_of_a_file_that_holds_one(tmp_path: Path) -> None:
    # A deployment's file fitted before ADR 0172 holds a forget-field head; it still loads.
    path = tmp_path / "heads.npz"
    sha256 = _heads((*HEAD_NAMES, "span", "forget_field")).save(path)

    loaded = Heads.load(path, sha256)

    assert set(loaded.heads) == {*HEAD_NAMES, "span"}
