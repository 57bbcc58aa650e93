"""Over HTTP, a kind configured with bare-typed fields and the learned extractor as a
deployment composes it by default: the one-pass QA reader (ADR 0107) proposes the value a
candidate states for a field no rule feeds, quoting the line, and a line that states nothing
proposes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from support.api_harness import bearer, build_ports, token
from support.api_steps import conversation, ok, proposing_worker

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.judgement.qa_reader.judge import QaReadingJudge
from factledger.api.bootstrap.judgement import learned_extractor
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.api.settings import LearnedExtractorSettings, load_settings
from factledger.testing.manual_clock import ManualClock

REF = "ats-candidate-57"
AGENT = bearer(token(Role.AGENT, kind="candidate", ref=REF, principal_id="recruiter-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-8"))
FIELDS = {"salary_expectation": "text", "notice_period": "text", "current_employer": "text"}


@pytest.fixture
def ports() -> Runtime:
    return build_ports(ManualClock(datetime(2026, 5, 4, 10, 0, tzinfo=UTC)))


async def test_a_stated_salary_is_proposed_by_the_qa_reader_for_a_bare_typed_field(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    settings = load_settings(extractor={"kind": "learned"}, profile_schemas={"candidate": FIELDS})
    assert isinstance(settings.extractor, LearnedExtractorSettings)
    extractor = learned_extractor(settings.extractor, RuleExtractor())
    assert isinstance(extractor.judge, QaReadingJudge)  # the default field reader
    worker = proposing_worker(ports, extractor, settings)
    body = {"kind": "candidate", "external_ref": REF}
    await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)

    said = [
        ("agent", "What salary are you hoping for in the new role?"),
        ("subject", "I'm hoping for around 25,000 cedis a month."),
        ("agent", "Great, thanks. Anything else for today?"),
        ("subject", "No, that's all, thanks a lot!"),
    ]
    await conversation(http, AGENT, {"session_id": "call-0504", "channel": "voice"}, said)
    assert (await worker.run_once()).dead == 0
    ports.catch_up()

    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    assert [(i["field"], i["display"]) for i in queue["items"]] == [
        ("salary_expectation", "around 25,000 cedis a month")
    ]
    assert queue["items"][0]["evidence"]["message_index"] == 1
