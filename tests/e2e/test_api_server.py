"""One real `factledger serve` process on loopback, driven by the blocking client: the embedded
default (SQLite ledger, views and short-term memory, the in-memory backend with the shipped
embedder, the in-process sync) configured only through the environment."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.api_harness import TEST_AUTH, TEST_SECRET, token

from factledger.api.http.auth import Role
from factledger.client import (
    Evidence,
    FactledgerClient,
    PermissionDeniedError,
    ProposalDraft,
    boolean,
    text,
)

STARTUP_LIMIT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir: Path = tmp_path_factory.mktemp("serve")
    port = free_port()
    env = {
        **os.environ,
        "FACTLEDGER_DATA_DIR": str(data_dir),
        "FACTLEDGER_AUTH__ENVIRONMENT": "test",
        "FACTLEDGER_AUTH__ISSUER": TEST_AUTH.issuer,
        "FACTLEDGER_AUTH__AUDIENCE": TEST_AUTH.audience,
        "FACTLEDGER_AUTH__KEYS": json.dumps([{"kid": "test", "secret": TEST_SECRET}]),
    }
    entry = "from factledger.api.cli.main import main; main()"
    command = [sys.executable, "-c", entry, "serve", "--port", str(port)]
    log = data_dir / "serve.log"
    with log.open("wb") as sink:
        # A file, not a pipe: nobody drains a pipe while the tests run, and a full one blocks.
        process = subprocess.Popen(  # noqa: S603 - our own entry point, fixed arguments
            command, env=env, stdout=subprocess.DEVNULL, stderr=sink
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(base_url, process, log)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=20)


def wait_until_ready(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"factledger serve exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("factledger serve did not become ready")


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
        assert context.degraded in {None, "timeout"}
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
