"""A process that loads the multilingual encoder runs NumPy's BLAS on one thread, so a fork
made while other threads encode returns (ADR 0189). With OpenBLAS's own pool, the same
process hung in most runs of a thousand forks, inside the pool's fork handler. A process that
asks for the limit before NumPy loads (a served one, at its warm-up) gets it too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[3]
FORKS = 300


def test_forks_beside_encoding_threads_all_return(tmp_path: Path) -> None:
    # A cache of its own: the user's may hold tables another build kept, and the log line that
    # rejects them would be part of the output read below (ADR 0197).
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [sys.executable, "-m", "support.forks_beside_encodes", str(FORKS)],
        cwd=TESTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["blas threads 1", f"forked {FORKS}"]


def test_the_limit_asked_for_before_numpy_loads_holds_once_it_loads() -> None:
    script = (
        "import sys\n"
        "from factledger.adapters.numeric_threads import one_blas_thread\n"
        "one_blas_thread()\n"
        "assert 'numpy' not in sys.modules\n"
        "import numpy\n"
        "from threadpoolctl import threadpool_info\n"
        "print(sorted({p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[1]"
