"""The bench's server CPU counts every process of a topology: `serve --workers 2` answers in
children of a supervisor that itself does almost nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from factledger.bench.load.servers import Servers

# A supervisor that starts a child burning a CPU second, and both wait to be killed.
SUPERVISOR = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]])
print(child.pid, flush=True)
time.sleep(60)
"""
BURNER = """
import time
end = time.process_time() + 5.0  # far past the 0.5 s counted, however late `before` is read
while time.process_time() < end:
    pass
time.sleep(60)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_the_cpu_of_a_supervisors_children_is_counted() -> None:
    supervisor = subprocess.Popen(  # noqa: S603 - this interpreter, our own script
        [sys.executable, "-c", SUPERVISOR, BURNER], stdout=subprocess.PIPE, text=True
    )
    try:
        assert supervisor.stdout is not None
        child = int(supervisor.stdout.readline())
        servers = Servers("http://127.0.0.1:1", (supervisor.pid,))
        before = servers.cpu_seconds()
        assert before is not None
        deadline = time.monotonic() + 30
        while (servers.cpu_seconds() or 0.0) - before < 0.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        after = servers.cpu_seconds()
        assert after is not None
        assert after - before >= 0.5  # the supervisor alone used almost none
        assert servers.tree() == [supervisor.pid, child]
        os.kill(child, signal.SIGKILL)
    finally:
        supervisor.kill()
        supervisor.wait()
