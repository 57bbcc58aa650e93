"""Over HTTP, a kind whose fields are typed (a date, an amount, a count), read by the learned
extractor as a deployment composes it: the product proposes each field's value as its type,
read from the words that said it ("68" in 1968, "two of us", "four hundred and fifty
thousand") and resolved against the session's day (ADR 0158), the ledger
checks it against the schema, and a reviewer approves it into the profile. Words that say no
single value of the type propose nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from support.api_harness import bearer, build_ports, token
from support.api_steps import conversation, ok

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.judgement import learned_extractor
from factledger.api.bootstrap.proposals import build_proposer, profile_schemas
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.api.settings import LearnedExtractorSettings, Settings, load_settings
from factledger.application.sync.feed import LedgerEventFeed
from factledger.application.sync.worker import SyncPorts, SyncWorker
from factledger.testing.manual_clock import ManualClock

REF = "buyer-2291"
AGENT = bearer(token(Role.AGENT, kind="buyer", ref=REF, principal_id="homes-bot"))
SERVICE = bearer(token(Role.SERVICE))
REVIEWER = bearer(token(Role.REVIEWER, principal_id="staff-3"))
FIELDS: dict[str, object] = {
    "date_of_birth": "date",
    "move_by_date": "date",
    "budget": {"type": "money", "slots": ["budget"], "currency": "GBP"},
    "household_size": "number",
}
# The same fields as text, where what the extractor read is proposed as said.
AS_TEXT = dict.fromkeys(FIELDS, "text")
AGENT_AS_TEXT = bearer(token(Role.AGENT, kind="buyer_notes", ref=REF, principal_id="homes-bot"))
SETTINGS = load_settings(
    extractor={"kind": "learned"}, profile_schemas={"buyer": FIELDS, "buyer_notes": AS_TEXT}
)


@pytest.fixture
def ports() -> Runtime:
    clock = ManualClock(datetime(2026, 5, 4, 10, 0, tzinfo=UTC))
    return build_ports(clock, schemas=profile_schemas(SETTINGS))


def typed_worker(ports: Runtime, settings: Settings) -> SyncWorker:
    """The sync worker with the product's proposer as `serve` composes it."""
    assert isinstance(settings.extractor, LearnedExtractorSettings)
    assert ports.sync_store is not None
    assert ports.backend is not None
    extractor = learned_extractor(settings.extractor, RuleExtractor())
    feed = LedgerEventFeed(ports.ledger)
    proposer = build_proposer(settings, ports.ledger, extractor)
    return SyncWorker(SyncPorts(ports.sync_store, feed, feed, ports.backend, proposer=proposer))


async def said_and_reviewed(
    http: httpx.AsyncClient,
    ports: Runtime,
    session: dict[str, str],
    said: list[tuple[str, str]],
    *,
    kinds: tuple[tuple[str, str], ...] = (("buyer", AGENT),),
) -> None:
    """Registers the buyer under each kind (with its agent's token), records `said` for each
    and runs the product's proposer over what was recorded."""
    worker = typed_worker(ports, SETTINGS)
    for kind, agent in kinds:
        body = {"kind": kind, "external_ref": REF}
        await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
        await conversation(http, agent, session, said)
    assert (await worker.run_once()).dead == 0
    ports.catch_up()


async def pending(http: httpx.AsyncClient) -> dict[str, dict[str, object]]:
    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    return {item["field"]: item for item in queue["items"]}


async def test_a_date_said_in_words_is_proposed_as_a_date_and_approved_into_the_profile(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    said = [
        ("agent", "Can I take your date of birth for the mortgage check, please?"),
        ("subject", "My date of birth is 9 June 68."),
        ("agent", "And is there a date you need to move by?"),
        ("subject", "We have to be out by 1 September 2027."),
    ]
    await said_and_reviewed(http, ports, {"session_id": "call-0504", "channel": "voice"}, said)

    items = await pending(http)
    birth = items["date_of_birth"]
    assert birth["value"] == {"type": "date", "value": "1968-06-09"}
    assert birth["evidence"] == {  # type: ignore[comparison-overlap]
        "session_id": "call-0504",
        "message_index": 1,
        "quote": "My date of birth is 9 June 68.",
    }
    assert items["move_by_date"]["value"] == {"type": "date", "value": "2027-09-01"}

    subject = ports.ledger.subject_id_for("t1", "buyer", REF)
    approve = f"/v1/subjects/{subject}/proposals/{birth['change_id']}/approve"
    await ok(await http.post(approve, json={}, headers=REVIEWER))
    ports.catch_up()
    profile = await ok(await http.get(f"/v1/subjects/{subject}/profile", headers=REVIEWER))
    assert profile["fields"]["date_of_birth"]["value"] == {"type": "date", "value": "1968-06-09"}


async def test_an_amount_takes_the_fields_currency_and_a_count_said_in_words_is_a_number(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    said = [
        ("agent", "How many people are in your household?"),
        ("subject", "It's just the two of us."),
        ("agent", "And what budget are you working with?"),
        ("subject", "Our budget is about four hundred and fifty thousand."),
    ]
    await said_and_reviewed(http, ports, {"session_id": "call-0505", "channel": "chat"}, said)

    items = await pending(http)
    assert items["household_size"]["value"] == {"type": "number", "value": "2"}
    assert items["budget"]["value"] == {"type": "money", "amount": "450000", "currency": "GBP"}


async def test_words_that_say_no_single_value_of_the_type_propose_nothing_for_it(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    said = [
        ("agent", "Can I take your date of birth, please?"),
        ("subject", "My date of birth is April 1968."),
        ("agent", "And what budget are you working with?"),
        ("subject", "Our budget is three or four hundred thousand dollars."),
    ]
    session = {"session_id": "call-0506", "channel": "chat"}
    both = (("buyer", AGENT), ("buyer_notes", AGENT_AS_TEXT))
    await said_and_reviewed(http, ports, session, said, kinds=both)

    queue = await ok(await http.get("/v1/proposals/pending", headers=REVIEWER))
    by_kind = {(i["subject_kind"], i["field"]): i["display"] for i in queue["items"]}
    # Read as text, both were proposed as said (the reader's spans: the budget's takes the
    # sentence's full stop); typed, neither: a month names no day, and the budget says two
    # numbers in a currency that is not the field's.
    assert by_kind == {
        ("buyer_notes", "date_of_birth"): "My date of birth is April 1968",
        ("buyer_notes", "budget"): "Our budget is three or four hundred thousand dollars.",
    }
