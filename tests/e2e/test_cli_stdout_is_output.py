"""A command's stdout is its output alone: logging goes to stderr, configured once when the
command line starts, for every command (the subject commands and `console-link` configured
none of their own, and a store's migration line landed on stdout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENTRY = "from factledger.api.cli.main import main; main()"
SUBJECT = "acme/lead/lead-0042"


def factledger(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTLEDGER_")}
    env["FACTLEDGER_DATA_DIR"] = str(data_dir)
    return subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_a_subject_command_prints_nothing_of_its_logs_on_stdout(tmp_path: Path) -> None:
    # A fresh data directory: opening the stores applies their migrations, which logs.
    fresh = tmp_path / "fresh"
    missing = factledger(
        fresh,
        "subjects",
        "expire-field",
        SUBJECT,
        "supplier",
        "--until",
        "2027-01-01T00:00:00Z",
        "--by",
        "ops-1",
    )
    assert missing.returncode == 1
    # Unconfigured, the migrations' lines were on stdout; now they go to stderr (at WARNING,
    # so not at all), beside the command's own error.
    assert missing.stdout == ""
    assert "NotFoundError" in missing.stderr


def test_console_link_prints_only_the_link_on_stdout(tmp_path: Path) -> None:
    linked = factledger(tmp_path, "console-link", "--tenant", "acme")
    assert linked.returncode == 0, linked.stderr
    (line,) = linked.stdout.splitlines()
    assert line.startswith("http://127.0.0.1:8000/console/sign-in#token=")
