"""The sync bench's reading of a server's CPU time from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from factledger.bench.write.sync import server_cpu_seconds

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc only")


def test_a_process_tree_cpu_counts_live_and_reaped_children() -> None:
    # Given this process as the "server" and a child that burns CPU, then exits
    before = server_cpu_seconds(os.getpid())
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)  # noqa: S603 - our own interpreter
    time.sleep(0.05)

    after = server_cpu_seconds(os.getpid())

    # Then the reaped child's CPU is in the total
    assert before is not None
    assert after is not None
    assert after - before >= 0.25


def test_no_server_means_no_figure() -> None:
    assert server_cpu_seconds(None) is None
