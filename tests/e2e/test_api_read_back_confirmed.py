"""Over HTTP, with the learned extractor composed with read-backs on (ADR 0138): a value the
agent reads back and the subject confirms is proposed, quoting the subject's yes and naming
the agent's line; a value the agent offers and the subject does not confirm is not."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from support.api_harness import bearer, build_ports, token
from support.api_steps import conversation, ok, proposing_worker

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.judgement import learned_extractor
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.api.settings import LearnedExtractorSettings, load_settings
from factledger.testing.manual_clock import ManualClock

REF = "helpdesk-customer-12"
AGENT = bearer(token(Role.AGENT, kind="customer", ref=REF, principal_id="support-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-3"))
FIELDS = {"plan": "text", "support_tier": "text"}


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(datetime(2026, 6, 9, 10, 0, tzinfo=UTC)))


async def test_a_plan_the_agent_reads_back_and_the_subject_confirms_is_proposed(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    settings = load_settings(
        extractor={"kind": "learned", "read_backs": True}, profile_schemas={"customer": FIELDS}
    )
    assert isinstance(settings.extractor, LearnedExtractorSettings)
    extractor = learned_extractor(settings.extractor, RuleExtractor())
    assert extractor.read_backs is not None
    worker = proposing_worker(ports, extractor, settings)
    body = {"kind": "customer", "external_ref": REF}
    await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)

    said = [
        ("agent", "So you're on the Premium plan now?"),
        ("subject", "Yes, that's right."),
        ("agent", "Shall we keep you on the Enterprise plan?"),
        ("subject", "I'll think about it."),
    ]
    await conversation(http, AGENT, {"session_id": "chat-0609", "channel": "chat"}, said)
    assert (await worker.run_once()).dead == 0
    ports.catch_up()

    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    assert [(i["field"], "Premium" in i["display"]) for i in queue["items"]] == [("plan", True)]
    item = queue["items"][0]
    assert (item["origin"], item["evidence"]["message_index"]) == ("stated", 1)
    assert item["evidence"]["quote"] == "Yes, that's right."
    assert "said by the agent (session chat-0609, message 0), confirmed" in item["rationale"]
