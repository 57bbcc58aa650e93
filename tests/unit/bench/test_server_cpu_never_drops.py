"""A server's CPU as the benches read it never drops when one of its processes ends between
two readings: the parent's reaped children keep the time (a PostgreSQL backend ends with its
connection; read as live children only, a block's server CPU came out negative)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from factledger.bench.pgvector.turns import server_cpu_seconds

# A parent that starts a child burning CPU for a while, reaps it, then waits to be killed.
PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c",
    "import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass"])
child.wait()
print("reaped", flush=True)
time.sleep(60)
"""


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc")
def test_a_child_that_ends_between_two_readings_keeps_its_time_in_the_sum() -> None:
    parent = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while not _children(parent.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        while_running = server_cpu_seconds(parent.pid)
        assert parent.stdout is not None
        assert parent.stdout.readline().strip() == "reaped"
        assert not _children(parent.pid)
        after = server_cpu_seconds(parent.pid)
        assert after >= while_running
        assert after >= 0.3  # the child's burn, now among the parent's reaped children
    finally:
        parent.kill()
        parent.wait()
