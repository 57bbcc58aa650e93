"""Files written whole or not at all, and the temporaries a killed writer leaves: removed by
the next write of the same file once nobody has written to them for a while, never a live
writer's and never another file's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from factledger.adapters.atomic_files import (
    ABANDONED_AFTER_S,
    remove_abandoned,
    temporary_prefix,
    write_atomically,
)

# A writer that has written part of its file and is killed before it renames or cleans up.
_KILLED_WRITER = """
import sys, time
from pathlib import Path
from factledger.adapters.atomic_files import write_atomically

def write(file):
    file.write(b"x" * 1_000_000)
    file.flush()
    print("writing", flush=True)
    time.sleep(60)

write_atomically(Path(sys.argv[1]), write)
"""


def _age(path: Path, seconds: float) -> None:
    """Backdates `path` as if nobody had written to it for `seconds`."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def _temporaries(target: Path) -> list[Path]:
    return sorted(target.parent.glob(temporary_prefix(target) + "*"))


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "table.npy"
    target.write_bytes(b"old")
    write_atomically(target, lambda file: file.write(b"new"))
    assert target.read_bytes() == b"new"
    assert _temporaries(target) == []


def test_a_failed_write_leaves_the_earlier_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "table.npy"
    target.write_bytes(b"old")

    def failing(file: object) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_atomically(target, failing)
    assert target.read_bytes() == b"old"
    assert _temporaries(target) == []


def test_a_killed_writers_temporary_goes_with_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "table.npy"
    writer = subprocess.Popen(  # noqa: S603 - this interpreter, a script of this test
        [sys.executable, "-c", _KILLED_WRITER, str(target)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "writing"
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=10)
    (left,) = _temporaries(target)
    assert left.stat().st_size == 1_000_000
    assert not target.exists()

    _age(left, ABANDONED_AFTER_S + 60)
    write_atomically(target, lambda file: file.write(b"whole"))
    assert target.read_bytes() == b"whole"
    assert _temporaries(target) == []


def test_a_live_writers_temporary_is_left_to_it(tmp_path: Path) -> None:
    target = tmp_path / "table.npy"
    live = tmp_path / (temporary_prefix(target) + "abc123")
    live.write_bytes(b"half")
    write_atomically(target, lambda file: file.write(b"whole"))
    assert live.read_bytes() == b"half"
    assert target.read_bytes() == b"whole"


def test_only_the_written_files_temporaries_are_removed(tmp_path: Path) -> None:
    target = tmp_path / "table.npy"
    others = [
        tmp_path / (temporary_prefix(tmp_path / "tokenizer.marshal") + "abc123"),
        tmp_path / "table.npy.json",
        tmp_path / ".table.npyx",  # not a temporary of the table: its name only starts alike
    ]
    for other in others:
        other.write_bytes(b"keep")
        _age(other, ABANDONED_AFTER_S * 10)
    abandoned = tmp_path / (temporary_prefix(target) + "abc123")
    abandoned.write_bytes(b"half")
    _age(abandoned, ABANDONED_AFTER_S * 10)

    assert remove_abandoned(target) == 1
    assert not abandoned.exists()
    assert all(other.read_bytes() == b"keep" for other in others)


def test_what_cannot_be_removed_never_stops_a_write(tmp_path: Path) -> None:
    target = tmp_path / "table.npy"
    # Something of a temporary's name that is no file (a directory someone made): left alone.
    strange = tmp_path / (temporary_prefix(target) + "dir")
    strange.mkdir()
    _age(strange, ABANDONED_AFTER_S * 10)
    write_atomically(target, lambda file: file.write(b"whole"))
    assert strange.is_dir()
    assert target.read_bytes() == b"whole"


def test_a_missing_directory_has_nothing_to_remove(tmp_path: Path) -> None:
    assert remove_abandoned(tmp_path / "absent" / "table.npy") == 0
