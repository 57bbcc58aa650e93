"""`factledger serve` is ready before its embedding model has loaded (the model loads on a
thread): the requests that need the model right after ready wait for it. The first recall
answers (degraded at worst, as for any slow embedder, never an error), the first session is
embedded and becomes searchable, and no sync item fails or is lost on the way."""

from __future__ import annotations

import time
from pathlib import Path

from support.api_harness import token
from support.serve_process import serving

from factledger.api.http.auth import Role
from factledger.client import FactledgerClient

SEARCHABLE_WITHIN_S = 120.0  # generous: only a hang fails on it


def test_the_first_requests_after_ready_wait_for_the_model(tmp_path: Path) -> None:
    with serving(tmp_path / "serve") as base_url:
        # The first request after ready waits for the routes' load, the first recall for the
        # model's: bounds for a hang, not the client's five seconds, on a loaded machine.
        service = FactledgerClient(base_url, token(Role.SERVICE, tenant="acme"), timeout_s=60)
        lead = service.register_subject("lead", "crm-17").subject_id
        agent_token = token(Role.AGENT, tenant="acme", kind="lead", ref="crm-17")
        with service, FactledgerClient(base_url, agent_token, timeout_s=60) as agent:
            # Answered (the client raises on an error status); nothing has been said yet.
            assert agent.recall("which supplier do they use?").notes == []
            agent.start_session("chat-1", "chat")
            service.append_message("chat-1", "subject", "We moved to Supplier B.", subject=lead)
            agent.end_session("chat-1")
            deadline = time.monotonic() + SEARCHABLE_WITHIN_S
            while not (found := agent.recall("which supplier do they use?")).notes:
                assert time.monotonic() < deadline, "the session never became searchable"
                time.sleep(0.2)
            assert found.degraded is None
            assert any("Supplier B" in note.text for note in found.notes)
    logged = "".join(p.read_text() for p in (tmp_path / "serve").glob("serve-*.log"))
    assert "sync.item_failed" not in logged
    assert "sync.item_dead_lettered" not in logged
