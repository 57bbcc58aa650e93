"""`factledger_sync_lag_events` reads 0 once everything is delivered, on the embedded default
(SQLite ledger, the sync inside the API process): events the sync never reads (a subject's
registration, a session's start) move its position too."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.serve_process import lag_settles_at_zero, record_a_session, serving

pytestmark = pytest.mark.slow


def test_the_sync_lag_returns_to_zero_on_the_embedded_default(tmp_path: Path) -> None:
    extra = {"FACTLEDGER_EMBEDDER__KIND": "hashing", "FACTLEDGER_PROPOSALS__MODE": "off"}
    with serving(tmp_path / "data", extra) as base_url:
        record_a_session(base_url)
        assert lag_settles_at_zero(base_url) == 0
