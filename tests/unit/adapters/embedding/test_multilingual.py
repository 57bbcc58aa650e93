"""The packaged multilingual encoder: pinned files, and one meaning across languages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.embedding import multilingual
from factledger.adapters.embedding.multilingual import (
    MultilingualEmbedder,
    MultilingualModelIntegrityError,
)


async def test_one_meaning_lands_near_itself_in_other_languages() -> None:
    embedder = MultilingualEmbedder()
    yes_en, yes_es, yes_nl, no_de, other = await embedder.embed(
        [
            "Yes, that's correct.",
            "Sí, es correcto.",
            "Ja, dat klopt.",
            "Nein, das stimmt nicht.",
            "The delivery van broke down on the motorway.",
        ]
    )

    assert np.linalg.norm(yes_en) == pytest.approx(1.0, abs=1e-3)
    assert float(yes_en @ yes_es) > float(yes_en @ other) + 0.3
    assert float(yes_nl @ yes_es) > float(yes_nl @ other) + 0.3
    assert float(yes_en @ no_de) < float(yes_en @ yes_es)
    assert (await embedder.embed([])).shape == (0, multilingual.DIMENSION)


def test_files_that_differ_from_the_pins_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in multilingual.PINNED_SHA256:
        (tmp_path / name).write_bytes(b"not the model")
    monkeypatch.setattr(multilingual, "_resources", lambda: tmp_path)

    with pytest.raises(MultilingualModelIntegrityError, match="sha256"):
        MultilingualEmbedder().embed_sync(["hello"])
    (tmp_path / "sp.model").unlink()
    (tmp_path / "weights.npz").unlink()
    with pytest.raises(MultilingualModelIntegrityError, match="no weights.npz"):
        MultilingualEmbedder().embed_sync(["hello"])
