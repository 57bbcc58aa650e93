"""LlamaIndex on factledger (extra `factledger[llamaindex]`, on `llama-index-core` only).

```python
from factledger.client import FactledgerClient
from factledger.integrations.llamaindex import FactledgerMemory, FactledgerRetriever

client = FactledgerClient("http://localhost:8000", agent_token)
memory = FactledgerMemory.from_defaults(client=client, session_id="chat-42")
memory.put(ChatMessage(role=MessageRole.USER, content="We moved to Supplier B in March."))
memory.reset()  # ends the session: recorded, then searchable once the sync has run
nodes = FactledgerRetriever(client).retrieve("which supplier do they use?")
```
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr

from factledger.client import FactledgerClient
from factledger.client.calls import ME
from factledger.client.models import Channel, EndedSession, Role, TranscriptMessage
from factledger.integrations.conversation import Conversation
from factledger.integrations.provenance import excerpt_metadata, missing, note_metadata

try:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.memory.memory import BaseMemoryBlock
    from llama_index.core.memory.types import BaseMemory
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ModuleNotFoundError as exc:  # pragma: no cover - the extra is installed for the tests
    raise ModuleNotFoundError(missing("llama-index-core", "llamaindex"), name=exc.name) from exc

__all__ = ["FactledgerMemory", "FactledgerMemoryBlock", "FactledgerRetriever"]


class FactledgerRetriever(BaseRetriever):
    """Recall as a LlamaIndex retriever: a `NodeWithScore` per note (its recall score) and per
    excerpt (for a tenant that opted in), provenance in the node's metadata (`kind`,
    `session_id`, `channel`, `on`, `ref`).

    `subject` is `me` for an agent token's own subject, or a subject id for a service token;
    the API answers only what the token may read.
    """

    def __init__(self, client: FactledgerClient, *, subject: str = ME, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._client = client
        self._subject = subject

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        answer = self._client.recall(query_bundle.query_str, subject=self._subject)
        nodes = [
            NodeWithScore(
                node=TextNode(text=note.text, id_=note.ref, metadata=note_metadata(note)),
                score=note.score,
            )
            for note in answer.notes
        ]
        nodes += [
            NodeWithScore(node=TextNode(text=excerpt.text, metadata=excerpt_metadata(excerpt)))
            for excerpt in answer.excerpts
        ]
        return nodes


_ROLES: dict[MessageRole, Role] = {
    MessageRole.USER: "subject",
    MessageRole.ASSISTANT: "agent",
    MessageRole.SYSTEM: "system",
}
_BACK: dict[str, MessageRole] = {"subject": MessageRole.USER, "system": MessageRole.SYSTEM}


def _chat_message(message: TranscriptMessage) -> ChatMessage:
    role = _BACK.get(message.role, MessageRole.ASSISTANT)
    at = None if message.at is None else message.at.isoformat()
    return ChatMessage(
        role=role, content=message.text, additional_kwargs={"index": message.index, "at": at}
    )


class FactledgerMemory(BaseMemory):
    """A chat memory that records the conversation into a factledger session, turn by turn.

    User turns are the subject's, assistant turns the agent's, system turns the system's; tool
    messages are not part of the conversation with the subject and are not recorded.
    `get(input)` is the active session's messages, after a system message of what recall
    finds for `input` in the subject's earlier conversations and profile (when it finds any).
    `reset()` ends the session: the ledger records it and the sync makes it searchable; the
    session id is then spent.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: FactledgerClient = Field(exclude=True)
    session_id: str
    subject: str = ME
    channel: Channel = "chat"
    recall_on_get: bool = True
    _conversation: Conversation = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        self._conversation = Conversation(self.client, self.session_id, self.subject, self.channel)

    @classmethod
    def class_name(cls) -> str:
        return "FactledgerMemory"

    @classmethod
    def from_defaults(cls, **kwargs: Any) -> FactledgerMemory:
        """`client` and `session_id` are required; `subject`, `channel`, `recall_on_get`
        optional."""
        return cls(**kwargs)

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:  # noqa: A002 - the framework's name
        messages = self.get_all()
        if input is None or not self.recall_on_get:
            return messages
        answer = self.client.recall(input, subject=self.subject)
        if not answer.notes and not answer.excerpts:
            return messages
        return [ChatMessage(role=MessageRole.SYSTEM, content=answer.prompt), *messages]

    def get_all(self) -> list[ChatMessage]:
        return [_chat_message(message) for message in self._conversation.transcript()]

    def put(self, message: ChatMessage) -> None:
        role = _ROLES.get(message.role)
        if role is not None and message.content:
            self._conversation.add(role, str(message.content))

    def set(self, messages: list[ChatMessage]) -> None:
        """Records the messages past those already recorded: a session only grows, so
        `messages` must begin with the recorded ones."""
        recorded = [(m.role, m.content) for m in self.get_all()]
        kept = [m for m in messages if m.role in _ROLES]
        if [(m.role, m.content) for m in kept[: len(recorded)]] != recorded:
            raise ValueError(
                "a factledger session only grows: the recorded messages must come first"
            )
        for message in kept[len(recorded) :]:
            self.put(message)

    def reset(self) -> None:
        self.end()

    def end(self) -> EndedSession | None:
        """Ends the session (recorded with its messages); None when it never started."""
        return self._conversation.end()


class FactledgerMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory for LlamaIndex's `Memory`: what recall finds in the subject's earlier
    conversations and profile for the latest user turn, inserted as the block's text.

    It only reads: the conversation is recorded by `FactledgerMemory` (or the client), so
    messages flushed from `Memory`'s short-term buffer are not taken
    (`accept_short_term_memory` is off).
    """

    client: FactledgerClient = Field(exclude=True)
    subject: str = ME
    name: str = "factledger"
    description: str | None = "What the subject said in earlier conversations, with dates."
    accept_short_term_memory: bool = False

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        query = next(
            (
                str(m.content)
                for m in reversed(messages or [])
                if m.role is MessageRole.USER and m.content
            ),
            None,
        )
        if query is None:
            return ""
        answer = await asyncio.to_thread(self.client.recall, query, subject=self.subject)
        return answer.prompt if answer.notes or answer.excerpts else ""

    async def _aput(self, messages: list[ChatMessage]) -> None:
        return None  # reads only; see the class's docstring
