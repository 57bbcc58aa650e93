"""`factledger history` in an 80-column terminal (`COLUMNS=80`): every value and quote is there
whole, wrapped, and no line is wider than the terminal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factledger.api.cli.main import app

pytestmark = pytest.mark.slow
ENTRY = "from factledger.api.cli.main import main; main()"
SUBJECT = "acme/lead/lead-0042"


def test_history_reads_whole_at_80_columns(tmp_path: Path) -> None:
    assert CliRunner().invoke(app, ["demo", "--data-dir", str(tmp_path)]).exit_code == 0
    env = {
        **os.environ,
        "COLUMNS": "80",
        "FACTLEDGER_DATA_DIR": str(tmp_path),
        "FACTLEDGER_EVENT_STORE__KIND": "sqlite",
    }
    done = subprocess.run(  # noqa: S603 - this interpreter, our own entry point
        [sys.executable, "-c", ENTRY, "history", SUBJECT],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80
    words = " ".join(out.split())
    assert "value Supplier A" in words
    assert "value Supplier B" in words
    assert 'evidence call-2026-03-03: "No, we moved to Supplier B last month."' in words
    assert "value may consider switching to us next quarter (2026-Q2)" in words
