"""The OpenAI-compatible extractor against the local fake server (no real model, ever)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import jsonschema
import pytest
import structlog
import yaml
from pydantic import SecretStr

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.openai.extractor import (
    ExtractorOutputError,
    OpenAICompatibleExtractor,
)
from factledger.adapters.extraction.openai.schema import FACTS_JSON_SCHEMA
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.extraction.rules.guidance import load_guidance
from factledger.api.bootstrap.backend import build_extractor
from factledger.api.settings import OpenAICompatibleExtractorSettings, load_settings
from factledger.application.errors import MemoryTimeoutError, MemoryUnavailableError
from factledger.application.memory.extraction import ExtractionContext, ExtractionRequest, KnownFact
from factledger.application.memory.guidance_catalogue import GuidanceRoute
from factledger.application.memory.types import RelationKind
from factledger.application.proposals.candidates import candidates_from
from factledger.application.proposals.schema import DEFAULT_LEAD
from factledger.bench.extraction_eval import evaluate, parse_cases, report_lines
from factledger.domain.transcript import Message, Role
from factledger.testing.fake_openai import FakeOpenAI, facts_reply, rule_model

WHEN = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
BASE_URL = "http://llm.test/v1"
INTRO = [
    Message(Role.AGENT, "Hi, I'm Ana from Acme. Would you like to upgrade to the Pro plan?"),
    Message(Role.SUBJECT, "Maybe next quarter, if the pricing works. We use Supplier A."),
]


@pytest.fixture
def fake() -> FakeOpenAI:
    return FakeOpenAI()


@pytest.fixture
async def http(fake: FakeOpenAI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=fake.transport()) as client:
        yield client


def extractor(http: httpx.AsyncClient, **options: object) -> OpenAICompatibleExtractor:
    settings = {"base_url": BASE_URL, "model": "tiny", "api_key": "test-key", **options}
    return OpenAICompatibleExtractor(
        http,
        instructions=load_guidance().llm_instructions,
        **settings,  # type: ignore[arg-type]
    )


def request(*messages: Message, known: tuple[KnownFact, ...] = ()) -> ExtractionRequest:
    return ExtractionRequest(list(messages) or INTRO, WHEN, known)


async def test_facts_come_back_as_extracted_facts(
    fake: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.replies.append(
        facts_reply(
            {
                "key": "a",
                "text": "may upgrade to the Pro plan next quarter",
                "slot": "intent:upgrade",
                "source_indexes": [0, 1],
                "condition": "if the pricing works",
                "valid_from": "2026-04-01",
            },
            {
                "key": "b",
                "text": "works with Supplier A",
                "slot": "supplier",
                "source_indexes": [1],
            },
        )
    )
    facts = await extractor(http).extract(request())
    assert [(f.key, f.text, f.slot, f.source_indexes) for f in facts] == [
        ("f0", "may upgrade to the Pro plan next quarter", "intent:upgrade", (0, 1)),
        ("f1", "works with Supplier A", "supplier", (1,)),
    ]
    assert facts[0].condition == "if the pricing works"
    assert facts[0].valid_from == datetime(2026, 4, 1, tzinfo=UTC)


async def test_the_request_carries_schema_instructions_and_transcript(
    fake: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    await extractor(http).extract(request())
    [body] = fake.requests
    assert body["model"] == "tiny"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == FACTS_JSON_SCHEMA
    system, user = body["messages"]
    assert "Only messages with role" in system["content"]
    sent = json.loads(user["content"])
    assert sent["interaction_date"] == WHEN.isoformat()
    assert [m["role"] for m in sent["messages"]] == ["agent", "subject"]


async def test_json_object_mode_for_servers_without_structured_outputs(
    fake: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    await extractor(http, response_format="json_object").extract(request())
    assert fake.requests[0]["response_format"] == {"type": "json_object"}


async def test_the_agent_introduction_trap_is_dropped_even_when_the_model_falls_for_it(
    fake: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.replies.append(
        facts_reply(
            {"key": "a", "text": "name is Ana", "slot": "name", "source_indexes": [0]},
            {"key": "b", "text": "works at Acme", "slot": "employer", "source_indexes": [0]},
            {
                "key": "c",
                "text": "works with Supplier A",
                "slot": "supplier",
                "source_indexes": [1],
            },
        )
    )
    with structlog.testing.capture_logs() as logs:
        facts = await extractor(http).extract(request())
    assert [f.text for f in facts] == ["works with Supplier A"]
    assert [f.key for f in facts] == ["f0"]
    assert logs[-1]["dropped"] == 2


async def test_relations_are_rekeyed_and_unknown_references_dropped(
    fake: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    known = (KnownFact("m1", "works with Supplier A", "supplier"),)
    fake.replies.append(
        facts_reply(
            {
                "key": "new",
                "text": "switched to Supplier B",
                "slot": "supplier",
                "source_indexes": [0],
                "relation": "updates",
                "related_to": ["m1", "nonsense"],
            },
            {
                "key": "why",
                "text": "delivery reliability matters to them",
                "slot": "insight",
                "source_indexes": [0],
                "relation": "derives",
                "related_to": ["new"],
                "is_inference": False,
            },
            {
                "key": "orphan",
                "text": "values something",
                "source_indexes": [0],
                "relation": "derives",
                "related_to": ["ghost"],
            },
        )
    )
    facts = await extractor(http).extract(
        request(Message(Role.SUBJECT, "We switched to Supplier B."), known=known)
    )
    update, derived = facts
    assert (update.relation, update.related_to) == (RelationKind.UPDATES, ("m1",))
    assert (derived.relation, derived.related_to) == (RelationKind.DERIVES, ("f0",))
    assert derived.is_inference


async def test_indexes_out_of_range_are_dropped(fake: FakeOpenAI, http: httpx.AsyncClient) -> None:
    fake.replies.append(
        facts_reply(
            {"key": "a", "text": "works with Supplier A", "source_indexes": [1, 7, -1]},
            {"key": "b", "text": "made up", "source_indexes": [9]},
        )
    )
    facts = await extractor(http).extract(request())
    assert [(f.text, f.source_indexes) for f in facts] == [("works with Supplier A", (1,))]


async def test_a_slot_value_is_kept_only_when_the_subject_said_it(
    fake: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    fake.replies.append(
        facts_reply(
            {
                "key": "a",
                "text": "works with Supplier A",
                "slot": "supplier",
                "source_indexes": [1],
                "value": "Supplier A",
            },
            {
                "key": "b",
                "text": "may upgrade, if the pricing works",
                "slot": "intent:upgrade",
                "source_indexes": [1],
                "value": "the Enterprise plan",  # nobody said it
            },
            {"key": "c", "text": "is hedging", "source_indexes": [1], "value": "hedging"},
        )
    )
    facts = await extractor(http).extract(request())
    assert [f.value for f in facts] == ["Supplier A", None, None]  # the last has no slot


async def test_a_negation_travels_with_its_fact(fake: FakeOpenAI, http: httpx.AsyncClient) -> None:
    fake.replies.append(
        facts_reply(
            {
                "key": "a",
                "text": "no longer works with Supplier A",
                "slot": "supplier",
                "source_indexes": [0],
                "value": "Supplier A",
                "negated": True,
            }
        )
    )
    said = Message(Role.SUBJECT, "We no longer use Supplier A.")
    facts = await extractor(http).extract(request(said))
    assert [(f.value, f.negated) for f in facts] == [("Supplier A", True)]


@pytest.mark.parametrize(
    "content",
    [
        "Sure! Here are the facts: the subject uses Supplier A.",
        '{"facts": [{"key": "a", "text": "x"}]}',
        '{"facts": "none"}',
        '{"facts": [], "notes": "extra field"}',
        "",
    ],
)
async def test_malformed_model_output_is_a_clear_error(
    fake: FakeOpenAI, http: httpx.AsyncClient, content: str
) -> None:
    fake.replies.append(content)
    with pytest.raises(ExtractorOutputError, match="extractor: the answer"):
        await extractor(http).extract(request())


async def test_a_truncated_answer_is_an_error(fake: FakeOpenAI, http: httpx.AsyncClient) -> None:
    fake.finish_reason = "length"
    with pytest.raises(ExtractorOutputError, match="cut off"):
        await extractor(http).extract(request())


async def test_a_refusal_is_an_error(fake: FakeOpenAI, http: httpx.AsyncClient) -> None:
    fake.refusal = "I cannot help with that."
    with pytest.raises(ExtractorOutputError, match="refused"):
        await extractor(http).extract(request())


async def test_a_fenced_json_answer_is_accepted(fake: FakeOpenAI, http: httpx.AsyncClient) -> None:
    reply = facts_reply({"key": "a", "text": "works with Supplier A", "source_indexes": [1]})
    fake.replies.append(f"```json\n{reply}\n```")
    assert len(await extractor(http).extract(request())) == 1


@pytest.mark.parametrize("status", [429, 500, 503, 400])
async def test_http_failures_become_unavailable(
    fake: FakeOpenAI, http: httpx.AsyncClient, status: int
) -> None:
    fake.failures.append(status)
    with pytest.raises(MemoryUnavailableError, match=str(status)):
        await extractor(http).extract(request())


async def test_a_wrong_key_is_unavailable(fake: FakeOpenAI, http: httpx.AsyncClient) -> None:
    with pytest.raises(MemoryUnavailableError, match="401"):
        await extractor(http, api_key="wrong").extract(request())


async def test_a_slow_model_times_out(fake: FakeOpenAI, http: httpx.AsyncClient) -> None:
    fake.delay_s = 0.5
    with pytest.raises(MemoryTimeoutError):
        await extractor(http, timeout_s=0.05).extract(request())


async def test_a_connection_failure_is_unavailable() -> None:
    def refuse(_: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        with pytest.raises(MemoryUnavailableError, match="ConnectError"):
            await extractor(client).extract(request())


async def test_an_empty_transcript_calls_nothing(fake: FakeOpenAI, http: httpx.AsyncClient) -> None:
    assert await extractor(http).extract(ExtractionRequest([], WHEN)) == []
    assert fake.requests == []


async def test_logs_hold_no_content_on_success_or_failure(
    fake: FakeOpenAI, http: httpx.AsyncClient
) -> None:
    secret = "Nightingale"
    said = Message(Role.SUBJECT, f"Our project {secret} uses Supplier A.")
    fake.replies.append(
        facts_reply({"key": "a", "text": f"runs project {secret}", "source_indexes": [0]})
    )
    fake.replies.append(f"not json about {secret}")
    with structlog.testing.capture_logs() as logs:
        await extractor(http).extract(request(said))
        with pytest.raises(ExtractorOutputError) as failure:
            await extractor(http).extract(request(said))
    assert logs
    assert secret not in repr(logs)
    assert secret not in str(failure.value)


async def test_served_over_asgi_too(fake: FakeOpenAI) -> None:
    fake.replies.append(facts_reply({"key": "a", "text": "uses Supplier A", "source_indexes": [1]}))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=fake)) as client:
        facts = await extractor(client).extract(request())
    assert [f.text for f in facts] == ["uses Supplier A"]


async def test_settings_build_the_extractor_with_a_prompt_file(
    fake: FakeOpenAI, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Extract facts about the customer of a bakery.", encoding="utf-8")
    settings = OpenAICompatibleExtractorSettings(
        base_url=BASE_URL, model="tiny", api_key=SecretStr("test-key"), prompt_path=prompt
    )
    built = build_extractor(settings, http)
    assert isinstance(built, OpenAICompatibleExtractor)
    await built.extract(request())
    assert fake.requests[0]["messages"][0]["content"].startswith("Extract facts about the customer")


def test_settings_choose_the_learned_extractor_by_default(http: httpx.AsyncClient) -> None:
    assert isinstance(build_extractor(load_settings().extractor, http), LearnedExtractor)
    rules = load_settings(extractor={"kind": "rule"}).extractor
    assert isinstance(build_extractor(rules, http), RuleExtractor)


def test_the_fake_answers_match_the_schema_sent_to_models() -> None:
    reply = facts_reply({"key": "a", "text": "t", "source_indexes": [0], "relation": "updates"})
    jsonschema.validate(json.loads(reply), FACTS_JSON_SCHEMA)


async def test_the_fake_serves_deterministic_embeddings(fake: FakeOpenAI) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=fake)) as client:
        headers = {"authorization": "Bearer test-key"}
        body = {"model": "e", "input": ["supplier a", "supplier b", "supplier a"]}
        answer = (await client.post(f"{BASE_URL}/embeddings", json=body, headers=headers)).json()
    rows = {row["index"]: row["embedding"] for row in answer["data"]}
    assert len(rows[0]) == fake.embedding_dimension
    assert rows[0] == rows[2]
    assert rows[0] != rows[1]


async def test_the_whole_llm_path_scores_like_the_model_behind_it() -> None:
    # Given a fake model that answers with exactly what the rule extractor finds
    labelled = Path(__file__).parents[3] / "data" / "extraction_set.yaml"
    cases = parse_cases(yaml.safe_load(labelled.read_text(encoding="utf-8")))
    fake = FakeOpenAI(responder=rule_model)
    async with httpx.AsyncClient(transport=fake.transport()) as client:
        # When the labelled set runs through prompt, schema, parsing and guards
        through_llm = await evaluate(extractor(client), cases)
    direct = await evaluate(RuleExtractor(), cases)
    # Then nothing is lost or altered on the way
    assert report_lines(through_llm) == report_lines(direct)
    for via, rule in zip(through_llm.results, direct.results, strict=True):
        # The slot's value and the negation travel too, so a proposal carries the value alone.
        assert via.facts == rule.facts


async def test_the_instructions_sent_follow_the_conversation_type(
    fake: FakeOpenAI, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    # Given the extractor as bootstrap builds it, with a tenant route of its own
    onboarding = tmp_path / "onboarding.yaml"
    onboarding.write_text(
        "extends: default\nllm_instructions: This is an onboarding call.\n", encoding="utf-8"
    )
    settings = OpenAICompatibleExtractorSettings(
        base_url=BASE_URL, model="tiny", api_key=SecretStr("test-key")
    )
    route = GuidanceRoute(str(onboarding), tenant="acme", conversation_type="onboarding")
    built = build_extractor(settings, http, [route])
    # When one transcript is extracted as each kind of conversation
    contexts = [
        ExtractionContext(),
        ExtractionContext(conversation_type="sales_discovery"),
        ExtractionContext(conversation_type="support_ticket"),
        ExtractionContext(tenant="acme", conversation_type="onboarding"),
    ]
    for context in contexts:
        await built.extract(replace(request(), context=context))
    # Then each request carried its guidance's instructions, on top of the default's
    sent = [body["messages"][0]["content"] for body in fake.requests]
    assert len(set(sent)) == len(contexts)
    base = load_guidance().llm_instructions.rstrip("\n")
    assert all(text.startswith(base) for text in sent)
    assert "sales discovery call" in sent[1]
    assert "sales discovery call" not in sent[2]
    assert "support conversation" in sent[2]
    assert "onboarding call" in sent[3]


async def test_a_prompt_file_replaces_only_the_default_instructions(
    fake: FakeOpenAI, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Extract facts about the customer.", encoding="utf-8")
    settings = OpenAICompatibleExtractorSettings(
        base_url=BASE_URL, model="tiny", api_key=SecretStr("test-key"), prompt_path=prompt
    )
    built = build_extractor(settings, http)
    await built.extract(request())
    await built.extract(
        replace(request(), context=ExtractionContext(conversation_type="support_ticket"))
    )
    first, second = (body["messages"][0]["content"] for body in fake.requests)
    assert first.startswith("Extract facts about the customer")
    assert "support conversation" in second


async def test_the_model_proposes_the_slot_value_not_its_note() -> None:
    # Given a model that answers like the rule extractor, slot values included
    fake = FakeOpenAI(responder=rule_model)
    said = (
        Message(Role.SUBJECT, "We switched to Vandelay Freight last month."),
        Message(Role.SUBJECT, "Our budget is 40k."),
    )
    async with httpx.AsyncClient(transport=fake.transport()) as client:
        facts = await extractor(client).extract(request(*said))
    # When its facts become the lead's candidate changes
    found = candidates_from(facts, said, DEFAULT_LEAD, "s1")
    # Then each field gets the value as said, not "switched to ..." or "budget is ..."
    assert {c.feed.field: c.values for c in found} == {
        "supplier": ("Vandelay Freight",),
        "budget": ("40k",),
    }
