"""A process that loads the multilingual encoder runs NumPy's BLAS on one thread, so a fork
made while other threads encode returns (ADR 0189). With OpenBLAS's own pool, the same
process hung in most runs of a thousand forks, inside the pool's fork handler."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[3]
FORKS = 300


def test_forks_beside_encoding_threads_all_return() -> None:
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [sys.executable, "-m", "support.forks_beside_encodes", str(FORKS)],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["blas threads 1", f"forked {FORKS}"]
