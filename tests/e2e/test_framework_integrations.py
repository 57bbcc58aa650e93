"""The LangChain and LlamaIndex integrations against a live `factledger serve`: a conversation
recorded through each framework's memory, made searchable by the sync, retrieved through each
framework's retriever with its provenance, and never in another subject's results."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import TypeVar

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.history import RunnableWithMessageHistory
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from support.api_harness import token
from support.serve_process import routes_loaded, serving

from factledger.api.http.auth import Role
from factledger.client import FactledgerClient, InvalidRequestError, PermissionDeniedError
from factledger.integrations import langchain as lc
from factledger.integrations import llamaindex as li
from factledger.integrations.conversation import SessionEndedError

pytestmark = pytest.mark.slow
SEARCHABLE_WITHIN_S = 60.0  # the sync runs in the serving process; generous under load
T = TypeVar("T")

SUPPLIER = "We moved to Supplier B in March."
VANS = "We lease our vans from Northwind Motors."


@dataclass(frozen=True, slots=True)
class Lead:
    subject_id: str
    agent: FactledgerClient
    # The chat app that hears the person is the channel: its service token relays their turns
    # (an agent's token may not write the subject's words).
    channel: FactledgerClient


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # The rules pinned: this tests the frameworks' adapters, retrieving what the rules store
    # (the learned default reads "Our budget holder is the CFO." as a third party's fact).
    rules = {"FACTLEDGER_EXTRACTOR__KIND": "rule"}
    with serving(tmp_path_factory.mktemp("serve-integrations"), rules) as base_url:
        routes_loaded(base_url)
        yield base_url


@pytest.fixture(scope="module")
def service(server: str) -> Iterator[FactledgerClient]:
    with FactledgerClient(server, token(Role.SERVICE)) as client:
        yield client


def lead(server: str, service: FactledgerClient, ref: str) -> Iterator[Lead]:
    subject = service.register_subject("lead", ref)
    with FactledgerClient(server, token(Role.AGENT, kind="lead", ref=ref)) as agent:
        yield Lead(str(subject.subject_id), agent, service)


@pytest.fixture(scope="module")
def alice(server: str, service: FactledgerClient) -> Iterator[Lead]:
    yield from lead(server, service, "crm-integrations-a")


@pytest.fixture(scope="module")
def bob(server: str, service: FactledgerClient) -> Iterator[Lead]:
    yield from lead(server, service, "crm-integrations-b")


def eventually(probe: Callable[[], list[T]], found: Callable[[T], bool]) -> list[T]:
    """The probe's answer once it holds a match (the sync is asynchronous), or the last one."""
    deadline = time.monotonic() + SEARCHABLE_WITHIN_S
    while True:
        answer = probe()
        if any(found(item) for item in answer) or time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def test_langchain_records_a_conversation_and_retrieves_it(alice: Lead, bob: Lead) -> None:
    history = lc.FactledgerChatMessageHistory(alice.channel, "lc-alice-1", subject=alice.subject_id)
    assert history.messages == []
    tool_call = ToolMessage(content="crm lookup", tool_call_id="call-1")
    history.add_messages([HumanMessage(SUPPLIER), tool_call, AIMessage("Noted, thank you.")])
    recorded = history.messages
    assert [(type(m), m.content) for m in recorded] == [
        (HumanMessage, SUPPLIER),
        (AIMessage, "Noted, thank you."),
    ]
    again = lc.FactledgerChatMessageHistory(alice.channel, "lc-alice-1", subject=alice.subject_id)
    assert [m.content for m in again.messages] == [SUPPLIER, "Noted, thank you."]
    ended = history.end()
    assert ended is not None
    assert ended.message_count == 2
    assert history.messages == []
    with pytest.raises(SessionEndedError):
        history.add_user_message("one more thing")

    others = lc.FactledgerChatMessageHistory(
        bob.channel, "lc-bob-1", subject=bob.subject_id, channel="voice"
    )
    others.add_messages([HumanMessage(VANS)])
    others.clear()

    retriever = lc.FactledgerRetriever(client=alice.agent)
    documents = eventually(
        lambda: retriever.invoke("which supplier do they use?"),
        lambda d: "Supplier B" in d.page_content,
    )
    found = next(d for d in documents if "Supplier B" in d.page_content)
    assert found.metadata["session_id"] == "lc-alice-1"
    assert found.metadata["channel"] == "chat"
    assert found.metadata["kind"] == "memory"
    assert date.fromisoformat(found.metadata["on"])
    assert found.metadata["score"] > 0
    assert found.id == found.metadata["ref"]

    bobs = lc.FactledgerRetriever(client=bob.agent)
    vans = eventually(lambda: bobs.invoke("vans"), lambda d: "Northwind" in d.page_content)
    assert any(d.metadata["channel"] == "voice" for d in vans)
    for query in ("which supplier do they use?", "Supplier B in March", "vans"):
        assert not any("Supplier" in d.page_content for d in bobs.invoke(query))
        assert not any("Northwind" in d.page_content for d in retriever.invoke(query))


# LangChain 1.x points to LangGraph's persistence instead (outside langchain-core); the wrapper
# still runs throughout 1.x, and chat applications built on it meet this history through it.
@pytest.mark.filterwarnings("ignore:RunnableWithMessageHistory is deprecated")
def test_langchain_runnable_with_message_history_records_each_turn(alice: Lead) -> None:
    # A scripted chat model (langchain-core's own): the turns recorded are what matters here.
    model = FakeListChatModel(responses=["Noted: Supplier B.", "Noted: euros."])
    chat = RunnableWithMessageHistory(
        model,
        lambda session_id: lc.FactledgerChatMessageHistory(
            alice.channel, session_id, subject=alice.subject_id
        ),
    )
    config: RunnableConfig = {"configurable": {"session_id": "lc-alice-runnable"}}
    chat.invoke(SUPPLIER, config=config)
    chat.invoke("We pay in euros.", config=config)
    recorded = lc.FactledgerChatMessageHistory(
        alice.channel, "lc-alice-runnable", subject=alice.subject_id
    ).messages
    assert [(m.type, m.content) for m in recorded] == [
        ("human", SUPPLIER),
        ("ai", "Noted: Supplier B."),
        ("human", "We pay in euros."),
        ("ai", "Noted: euros."),
    ]


def test_langchain_retriever_for_a_service_names_the_subject(
    service: FactledgerClient, alice: Lead
) -> None:
    retriever = lc.FactledgerRetriever(client=service, subject=alice.subject_id, k=1)
    documents = eventually(
        lambda: retriever.invoke("Supplier B"), lambda d: "Supplier B" in d.page_content
    )
    assert len(documents) == 1
    assert "Supplier B" in documents[0].page_content


def test_llamaindex_records_a_conversation_and_retrieves_it(alice: Lead, bob: Lead) -> None:
    memory = li.FactledgerMemory.from_defaults(
        client=alice.channel, subject=alice.subject_id, session_id="li-alice-1"
    )
    assert memory.get_all() == []
    memory.put(ChatMessage(role=MessageRole.USER, content="Our budget holder is the CFO."))
    memory.put(ChatMessage(role=MessageRole.TOOL, content="crm lookup"))
    memory.put(ChatMessage(role=MessageRole.ASSISTANT, content="Thanks, noted."))
    assert [(m.role, m.content) for m in memory.get_all()] == [
        (MessageRole.USER, "Our budget holder is the CFO."),
        (MessageRole.ASSISTANT, "Thanks, noted."),
    ]
    history = memory.get_all()
    memory.set([*history, ChatMessage(role=MessageRole.USER, content="And we pay in euros.")])
    assert len(memory.get_all()) == 3
    with pytest.raises(ValueError, match="only grows"):
        memory.set([ChatMessage(role=MessageRole.USER, content="something else")])

    with_recall = eventually(
        lambda: memory.get("which supplier do they use?"),
        lambda m: m.role is MessageRole.SYSTEM and "Supplier B" in str(m.content),
    )
    assert with_recall[0].role is MessageRole.SYSTEM
    assert "Supplier B" in str(with_recall[0].content)
    assert [m.content for m in with_recall[1:]] == [m.content for m in memory.get_all()]
    memory.reset()
    assert memory.get_all() == []

    others = li.FactledgerMemory.from_defaults(
        client=bob.channel, subject=bob.subject_id, session_id="li-bob-1"
    )
    others.put(ChatMessage(role=MessageRole.USER, content="Our fleet has twelve trucks."))
    others.reset()

    retriever = li.FactledgerRetriever(alice.agent)
    nodes = eventually(
        lambda: retriever.retrieve("who is the budget holder?"),
        lambda n: "CFO" in n.node.get_content(),
    )
    found = next(n for n in nodes if "CFO" in n.node.get_content())
    assert found.node.metadata["session_id"] == "li-alice-1"
    assert date.fromisoformat(found.node.metadata["on"])
    assert found.score is not None
    assert found.score > 0

    bobs = li.FactledgerRetriever(bob.agent)
    eventually(lambda: bobs.retrieve("trucks"), lambda n: "trucks" in n.node.get_content())
    for query in ("who is the budget holder?", "supplier", "trucks"):
        assert not any(
            "CFO" in n.node.get_content() or "Supplier" in n.node.get_content()
            for n in bobs.retrieve(query)
        )
        assert not any("trucks" in n.node.get_content() for n in retriever.retrieve(query))
    # Bob's memory, asked about Alice's supplier, brings none of her notes into its prompt.
    bobs_memory = li.FactledgerMemory.from_defaults(
        client=bob.channel, subject=bob.subject_id, session_id="li-bob-2"
    )
    assert not any("Supplier B" in str(m.content) for m in bobs_memory.get("supplier"))


def test_llamaindex_memory_block_brings_recall_into_its_memory(alice: Lead, bob: Lead) -> None:
    recorder = li.FactledgerMemory.from_defaults(
        client=alice.channel, subject=alice.subject_id, session_id="li-alice-block"
    )
    recorder.put(ChatMessage(role=MessageRole.USER, content=SUPPLIER))
    recorder.reset()

    def memory_of(who: Lead) -> Memory:
        # A tokenizer of its own: LlamaIndex's default counts with tiktoken.
        block = li.FactledgerMemoryBlock(client=who.agent)
        return Memory.from_defaults(
            session_id=f"block-{who.subject_id}", memory_blocks=[block], tokenizer_fn=str.split
        )

    def ask(memory: Memory) -> list[ChatMessage]:
        async def turn() -> list[ChatMessage]:
            await memory.aput(ChatMessage(role=MessageRole.USER, content="which supplier?"))
            return await memory.aget()

        return asyncio.run(turn())

    alices = memory_of(alice)
    messages = eventually(lambda: ask(alices), lambda m: "Supplier B" in str(m.content))
    assert messages[0].role is MessageRole.SYSTEM
    assert "<factledger>" in str(messages[0].content)
    assert "Supplier B" in str(messages[0].content)
    assert not any("Supplier B" in str(m.content) for m in ask(memory_of(bob)))


def test_a_retriever_refuses_another_subject_or_a_malformed_one(alice: Lead, bob: Lead) -> None:
    with pytest.raises(PermissionDeniedError):
        lc.FactledgerRetriever(client=alice.agent, subject=bob.subject_id).invoke("vans")
    with pytest.raises(PermissionDeniedError):
        li.FactledgerRetriever(alice.agent, subject=bob.subject_id).retrieve("vans")
    with pytest.raises(InvalidRequestError) as refused:
        lc.FactledgerRetriever(client=alice.agent, subject="not-a-subject").invoke("vans")
    assert refused.value.field == "subject"
