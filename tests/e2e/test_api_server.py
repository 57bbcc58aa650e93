"""One real `factledger serve` process on loopback, driven by the blocking client: the embedded
default (SQLite ledger, views and short-term memory, the in-memory backend with the shipped
embedder, the in-process sync, the rule extractor) configured only through the environment."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from support.api_harness import token
from support.serve_process import routes_loaded, serving

from factledger.api.http.auth import Role
from factledger.client import (
    Evidence,
    FactledgerClient,
    PermissionDeniedError,
    ProposalDraft,
    boolean,
    text,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # The rules pinned: this tests the served process and the client, and counts the events of
    # a session whose only fact the agent proposed (the learned default adds a "timeline").
    rules = {"FACTLEDGER_EXTRACTOR__KIND": "rule"}
    with serving(tmp_path_factory.mktemp("serve"), rules) as base_url:
        routes_loaded(base_url)
        yield base_url


def test_a_real_server_serves_the_client(server: str) -> None:
    with FactledgerClient(server, token(Role.SERVICE)) as service:
        subject = service.register_subject("lead", "crm-900")
    with FactledgerClient(server, token(Role.AGENT, kind="lead", ref="crm-900")) as agent:
        assert agent.whoami().subject_id == subject.subject_id
        agent.start_session("voice-1", "voice")
        with FactledgerClient(server, token(Role.SERVICE)) as channel:
            said = "We moved to Supplier B in March."
            channel.append_message("voice-1", "subject", said, subject=subject.subject_id)
        stated = ProposalDraft(
            field="supplier",
            origin="stated",
            value=text("Supplier B"),
            evidence=Evidence(session_id="voice-1", message_index=0, quote="Supplier B"),
        )
        ended = agent.end_session("voice-1", proposals=[stated])
        assert ended.message_count == 1
        assert ended.proposals[0].status == "pending"
        context = agent.context("suppliers")
        # Whole: the served process's budget is one no busy machine runs out of (`serve_env`).
        assert context.degraded is None
        draft = ProposalDraft(field="budget_holder", origin="inferred", value=boolean(True))
        proposal = agent.propose(draft, idempotency_key="server-propose-1")
        again = agent.propose(draft, idempotency_key="server-propose-1")
        assert again == proposal
        with pytest.raises(PermissionDeniedError):
            agent.approve(subject.subject_id, proposal.change_id)
    with FactledgerClient(server, token(Role.REVIEWER)) as reviewer:
        decision = reviewer.approve(subject.subject_id, proposal.change_id)
        assert decision.profile_version == 1
        assert reviewer.profile(subject=subject.subject_id).fields["budget_holder"].display
    with FactledgerClient(server, token(Role.ANALYST)) as analyst:
        page = analyst.events(subject.subject_id)
    # registered, session recorded, two proposals, one confirmation; the product's review of
    # the session (proposing nothing the agent had not) runs after the recording, in between
    callers = [e.topic.split(".")[2] for e in page.events if "session_reviewed" not in e.topic]
    assert callers == [
        "registered",
        "session_recorded",
        "change_proposed",
        "change_proposed",
        "change_confirmed",
    ]
    metrics = httpx.get(f"{server}/metrics", timeout=5).text
    assert 'route="/v1/subjects/{subject}/proposals"' in metrics
