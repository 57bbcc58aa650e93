"""Every NumPy archive the product reads is read through `open_archive`, one reading at a time
across threads (CPython 3.11 before 3.11.8 can fail two header parses that overlap)."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.numpy_archives import open_archive

PRODUCT = Path(__file__).resolve().parents[3]
PRODUCT_PACKAGES = ("domain", "application", "adapters", "projections", "api")


def archive_bytes(**arrays: np.ndarray) -> bytes:
    sink = io.BytesIO()
    np.savez(sink, **arrays)  # type: ignore[arg-type]
    return sink.getvalue()


def test_an_archive_reads_the_same_from_its_bytes_and_from_its_file(tmp_path: Path) -> None:
    data = archive_bytes(w=np.arange(6, dtype=np.float32).reshape(2, 3), name=np.array("x"))
    (tmp_path / "a.npz").write_bytes(data)
    for source in (data, tmp_path / "a.npz"):
        with open_archive(source) as archive:
            assert sorted(archive.files) == ["name", "w"]
            assert archive["w"].tolist() == [[0, 1, 2], [3, 4, 5]]
            assert str(archive["name"]) == "x"


def test_a_pickled_member_is_refused() -> None:
    sink = io.BytesIO()
    np.savez(sink, o=np.array([{"a": 1}], dtype=object))
    with open_archive(sink.getvalue()) as archive, pytest.raises(ValueError, match="pickle"):
        archive["o"]


def test_a_second_thread_waits_until_the_first_reading_ends() -> None:
    data = archive_bytes(w=np.zeros(3))
    second_entered = threading.Event()

    def second_reading() -> None:
        with open_archive(data) as archive:
            archive["w"]
            second_entered.set()

    with open_archive(data) as archive:
        archive["w"]
        other = threading.Thread(target=second_reading)
        other.start()
        # Without the lock the other reading would be done well within this wait.
        assert not second_entered.wait(timeout=0.3)
    other.join(timeout=10)
    assert second_entered.is_set()


def test_a_reading_may_open_another_archive_on_the_same_thread() -> None:
    data = archive_bytes(w=np.ones(2))
    with open_archive(data) as outer, open_archive(data) as inner:
        assert outer["w"].tolist() == inner["w"].tolist() == [1.0, 1.0]


def test_the_product_reads_archives_only_through_open_archive() -> None:
    direct = re.compile(r"\b(?:np|numpy)\.load\(")
    offenders = [
        str(path.relative_to(PRODUCT))
        for package in PRODUCT_PACKAGES
        for path in sorted((PRODUCT / package).rglob("*.py"))
        if path.name != "numpy_archives.py" and direct.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
