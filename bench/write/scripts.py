"""Runs one of the bench's scripts in an interpreter under test (ours or a baseline install's)
and reads what it printed last, as JSON: how a build times its own code in its own process."""

from __future__ import annotations

import json
import subprocess
from typing import Any


def script_json(python: str, script: str, *args: str) -> Any:
    """`python -c script args...`; its last line of output, parsed (stderr is captured too,
    so a failing script's traceback is in the raised `CalledProcessError`)."""
    out = subprocess.run(  # noqa: S603 - an interpreter the caller named, our own script
        [python, "-c", script, *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return json.loads(out.splitlines()[-1])
