"""The Python client against the real app: typed answers, typed errors, retries that reuse keys."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import pytest
from support.api_harness import TEST_AUTH, token

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.application.sessions.types import SessionId, SessionKey
from factledger.client import (
    AsyncFactledgerClient,
    Evidence,
    FactledgerClient,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    ProposalDraft,
    RetryPolicy,
    items,
    text,
)

FAST = RetryPolicy(attempts=3, backoff_s=0.001, max_backoff_s=0.002)


class LosesFirstResponse(httpx.AsyncBaseTransport):
    """Delivers every request, but drops the answer of the first POST: the caller sees a
    network error although the server acted, which is exactly when a retry must not act twice."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.keys: list[str | None] = []
        self.dropped = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST":
            self.keys.append(request.headers.get("idempotency-key"))
            if not self.dropped:
                self.dropped = True
                await response.aread()
                raise httpx.ReadError("connection reset", request=request)
        return response


@pytest.fixture
def asgi(ports: Runtime) -> httpx.ASGITransport:
    return httpx.ASGITransport(app=create_app(ports=ports, auth=TEST_AUTH))


def client(transport: httpx.AsyncBaseTransport, jwt: str) -> AsyncFactledgerClient:
    return AsyncFactledgerClient("http://api", jwt, transport=transport, retry=FAST)


@pytest.fixture
async def agent(asgi: httpx.ASGITransport) -> AsyncIterator[AsyncFactledgerClient]:
    async with client(asgi, token(Role.SERVICE)) as service:
        await service.register_subject("lead", "crm-1")
    async with client(asgi, token(Role.AGENT, kind="lead", ref="crm-1")) as fl:
        yield fl


async def test_the_async_client_drives_a_session(
    agent: AsyncFactledgerClient, asgi: httpx.ASGITransport
) -> None:
    me = await agent.whoami()
    assert me.role == "agent"
    await agent.start_session("wa-1", "whatsapp")
    # The subject's words come from the channel that heard them, with the platform's token.
    async with client(asgi, token(Role.SERVICE)) as channel:
        said = await channel.append_message(
            "wa-1", "subject", "We work with Supplier A.", subject=me.subject_id
        )
    assert said.index == 0
    transcript = await agent.session_messages("wa-1")
    assert [m.text for m in transcript.messages] == ["We work with Supplier A."]
    draft = ProposalDraft(
        field="supplier",
        origin="stated",
        value=text("Supplier A"),
        evidence=Evidence(session_id="wa-1", message_index=0, quote="Supplier A"),
    )
    ended = await agent.end_session("wa-1", summary={"topic": "suppliers"}, proposals=[draft])
    assert ended.subject_id == me.subject_id
    change = ended.proposals[0]
    assert (change.field, change.status) == ("supplier", "pending")
    assert change.value == text("Supplier A")
    async with client(asgi, token(Role.REVIEWER)) as reviewer:
        decision = await reviewer.approve(change.subject_id, change.change_id, note="as quoted")
    assert (decision.status, decision.profile_version, decision.note) == (
        "confirmed",
        1,
        "as quoted",
    )
    assert (await agent.get_subject()).profile_version == 1


async def test_the_client_relays_a_dated_conversation_and_the_subjects_answer(
    agent: AsyncFactledgerClient, asgi: httpx.ASGITransport
) -> None:
    me = (await agent.whoami()).subject_id
    channel = client(asgi, token(Role.SERVICE))
    began = datetime(2026, 1, 2, 8, 0, tzinfo=UTC)  # before the harness clock's now
    session = await agent.start_session("call-0", "voice", started_at=began)
    assert session.started_at == began
    said = "We own a bakery in Lyon."
    await channel.append_message("call-0", "subject", said, at=began, subject=me)
    draft = ProposalDraft(
        field="business",
        origin="stated",
        value=text("a bakery in Lyon"),
        evidence=Evidence(session_id="call-0", message_index=0, quote="a bakery in Lyon"),
    )
    (change,) = (await agent.end_session("call-0", proposals=[draft])).proposals

    (ask,) = (await agent.context()).to_confirm
    assert (ask.ref, ask.question) == (
        str(change.change_id),
        "Is it right that your business is a bakery in Lyon?",
    )
    await agent.start_session("call-1", "voice")
    await agent.append_message("call-1", "agent", ask.question, asks=change.change_id)
    yes = "Yes, that is right."
    await channel.append_message("call-1", "subject", yes, confirms=change.change_id, subject=me)
    await channel.aclose()
    (decided,) = (await agent.end_session("call-1")).decided
    assert (decided.change_id, decided.status) == (change.change_id, "confirmed")
    assert decided.relayed_by is not None
    assert decided.relayed_by.kind == "system"  # the channel's service token
    assert (await agent.get_subject()).profile_version == 1


async def test_errors_arrive_typed_with_the_field(agent: AsyncFactledgerClient) -> None:
    with pytest.raises(InvalidRequestError) as info:
        await agent.start_session("bad id with spaces", "chat")
    assert info.value.field == "session_id"
    with pytest.raises(PermissionDeniedError):
        await agent.register_subject("lead", "crm-2")
    with pytest.raises(NotFoundError):
        await agent.append_message("never-started", "agent", "hi")
    with pytest.raises(PermissionDeniedError):
        await agent.append_message("never-started", "subject", "hi")
    with pytest.raises(InvalidRequestError) as empty:
        await agent.recall("")
    assert empty.value.field == "query"


async def test_a_retry_after_a_lost_answer_reuses_the_key_and_acts_once(
    asgi: httpx.ASGITransport, ports: Runtime
) -> None:
    flaky = LosesFirstResponse(asgi)
    async with client(flaky, token(Role.SERVICE)) as service:
        subject = await service.register_subject("lead", "crm-3")
        await service.start_session("s-1", "chat", subject=subject.subject_id)
        flaky.dropped = False  # lose the answer of the next command
        flaky.keys.clear()
        outcome = await service.append_message(
            "s-1", "subject", "We use Supplier C.", subject=subject.subject_id
        )
    assert len(flaky.keys) == 2
    assert flaky.keys[0] is not None
    assert flaky.keys[0] == flaky.keys[1]
    assert outcome.index == 0
    buffered = await ports.sessions.context(SessionKey(subject.subject_id, SessionId("s-1")))
    assert [m.text for m in buffered] == ["We use Supplier C."]


def test_the_sync_client_mirrors_the_async_one() -> None:
    public = {n for n in dir(AsyncFactledgerClient) if not n.startswith("_")}
    blocking = {n for n in dir(FactledgerClient) if not n.startswith("_")}
    assert public - {"aclose"} == blocking - {"close"}
    for name in public - {"aclose"}:
        async_sig = inspect.signature(getattr(AsyncFactledgerClient, name))
        sync_sig = inspect.signature(getattr(FactledgerClient, name))
        assert list(async_sig.parameters) == list(sync_sig.parameters), name


async def test_the_subject_confirms_taking_an_item_off_a_list(
    agent: AsyncFactledgerClient, asgi: httpx.ASGITransport
) -> None:
    me = (await agent.whoami()).subject_id
    channel = client(asgi, token(Role.SERVICE))
    listed = ProposalDraft(
        field="tools", origin="inferred", operation="append", value=items("Jira", "Trello")
    )
    change = await agent.propose(listed)
    async with client(asgi, token(Role.REVIEWER)) as reviewer:
        await reviewer.approve(change.subject_id, change.change_id)
    await agent.start_session("chat-2", "chat")
    said = "We stopped using Trello in May."
    await channel.append_message("chat-2", "subject", said, subject=me)
    removal = ProposalDraft(
        field="tools",
        origin="stated",
        operation="remove",
        value=items("Trello"),
        evidence=Evidence(session_id="chat-2", message_index=0, quote="stopped using Trello"),
        based_on_version=1,
    )
    (taken_off,) = (await agent.end_session("chat-2", proposals=[removal])).proposals

    (ask,) = (await agent.context()).to_confirm
    assert ask.question == "Should we take Trello off your tools?"
    await agent.start_session("chat-3", "chat")
    await agent.append_message("chat-3", "agent", ask.question, asks=taken_off.change_id)
    yes = "Yes, that is right."
    await channel.append_message("chat-3", "subject", yes, confirms=taken_off.change_id, subject=me)
    await channel.aclose()
    (decided,) = (await agent.end_session("chat-3")).decided
    assert (decided.change_id, decided.status) == (taken_off.change_id, "confirmed")
    profile = await agent.profile()
    assert profile.fields["tools"].value == items("Jira")


async def test_forgetting_one_item_of_a_list_keeps_the_others(
    agent: AsyncFactledgerClient, asgi: httpx.ASGITransport
) -> None:
    """ADR 0160: a field forgotten with `items` keeps the list's other items; an item the
    list does not hold is a typed 422 that names `items`."""
    listed = ProposalDraft(
        field="tools", origin="inferred", operation="append", value=items("Jira", "Trello")
    )
    change = await agent.propose(listed)
    async with client(asgi, token(Role.REVIEWER)) as reviewer:
        await reviewer.approve(change.subject_id, change.change_id)
    with pytest.raises(InvalidRequestError) as refused:
        await agent.forget_field("tools", "the subject asked", items=["Asana"])
    assert "items: tools does not hold Asana" in str(refused.value)

    done = await agent.forget_field("tools", "the subject asked", items=["trello"])
    assert done.profile_version == 2
    profile = await agent.profile()
    assert profile.fields["tools"].value == items("Jira")
    history = await agent.history(field="tools")
    assert [h.kind for h in history.entries] == ["append", "forgotten", "kept"]
