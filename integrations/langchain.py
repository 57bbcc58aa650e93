"""LangChain on factledger (extra `factledger[langchain]`, on `langchain-core` only).

```python
from factledger.client import FactledgerClient
from factledger.integrations.langchain import FactledgerChatMessageHistory, FactledgerRetriever

client = FactledgerClient("http://localhost:8000", agent_token)
history = FactledgerChatMessageHistory(client, session_id="chat-42")
history.add_messages([HumanMessage("We moved to Supplier B in March."), AIMessage("Noted.")])
history.clear()  # ends the session: recorded, then searchable once the sync has run
docs = FactledgerRetriever(client=client).invoke("which supplier do they use?")
```
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ConfigDict, Field

from factledger.client import FactledgerClient
from factledger.client.calls import ME
from factledger.client.models import Channel, EndedSession, Role, TranscriptMessage
from factledger.integrations.conversation import Conversation
from factledger.integrations.provenance import excerpt_metadata, missing, note_metadata

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.documents import Document
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
    from langchain_core.retrievers import BaseRetriever
except ModuleNotFoundError as exc:  # pragma: no cover - the extra is installed for the tests
    raise ModuleNotFoundError(missing("langchain-core", "langchain"), name=exc.name) from exc

__all__ = ["FactledgerChatMessageHistory", "FactledgerRetriever"]


class FactledgerRetriever(BaseRetriever):
    """Recall as a LangChain retriever: one `Document` per note (and per excerpt, for a
    tenant that opted in), its provenance in `metadata` (`kind`, `session_id`, `channel`, `on`,
    `score`, `ref`).

    `subject` is `me` for an agent token's own subject, or a subject id for a service token;
    the API answers only what the token may read, so one subject's memory never shows in
    another's results.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: FactledgerClient = Field(exclude=True)
    subject: str = ME
    k: int | None = None  # at most this many documents (the API's own limit otherwise)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        answer = self.client.recall(query, subject=self.subject)
        documents = [
            Document(page_content=note.text, metadata=note_metadata(note), id=note.ref)
            for note in answer.notes
        ]
        documents += [
            Document(page_content=excerpt.text, metadata=excerpt_metadata(excerpt))
            for excerpt in answer.excerpts
        ]
        return documents if self.k is None else documents[: self.k]


_ROLES: dict[str, Role] = {"human": "subject", "ai": "agent", "system": "system"}


def _message(message: TranscriptMessage) -> BaseMessage:
    metadata = {
        "index": message.index,
        "at": None if message.at is None else message.at.isoformat(),
    }
    if message.role == "subject":
        return HumanMessage(content=message.text, additional_kwargs=metadata)
    if message.role == "system":
        return SystemMessage(content=message.text, additional_kwargs=metadata)
    return AIMessage(content=message.text, additional_kwargs=metadata)


class FactledgerChatMessageHistory(BaseChatMessageHistory):
    """A conversation recorded turn by turn into a factledger session (what LangChain's
    `RunnableWithMessageHistory` takes from its `get_session_history`).

    Human turns are the subject's, AI turns the agent's, system turns the system's; other
    messages (tool calls and results) are not part of the conversation with the subject and
    are not recorded. `messages` reads the active session back. `clear()` ends the session:
    the ledger records it and the sync makes it searchable; the session id is then spent.
    """

    def __init__(
        self,
        client: FactledgerClient,
        session_id: str,
        *,
        subject: str = ME,
        channel: Channel = "chat",
    ) -> None:
        self._conversation = Conversation(client, session_id, subject, channel)

    @property
    def session_id(self) -> str:
        return self._conversation.session_id

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return [_message(message) for message in self._conversation.transcript()]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        for message in messages:
            role = _ROLES.get(message.type)
            if role is not None:
                self._conversation.add(role, message.text)

    def clear(self) -> None:
        self.end()

    def end(self) -> EndedSession | None:
        """Ends the session (recorded with its messages); None when it never started."""
        return self._conversation.end()
