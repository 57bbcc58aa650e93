"""`AsyncFactledgerClient`: the API for asyncio backends (chat, voice and CRM services)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Self
from uuid import UUID

import httpx

from factledger.client import calls as c
from factledger.client import models as m
from factledger.client.calls import ME, AnswerT, Call
from factledger.client.errors import TransportFailedError
from factledger.client.events import AsyncEventFollower, StreamQuery
from factledger.client.transport import (
    RetryPolicy,
    auth_headers,
    decode,
    later_position,
    request_args,
)

Subject = str | UUID


class AsyncFactledgerClient:
    """Typed async client. `subject` defaults to `me`: the subject an agent token is bound to.

    Commands get an idempotency key (pass `idempotency_key` to choose it) that every retry
    reuses, so a retried command returns the first result and never acts twice.
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout_s: float = 5.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers=auth_headers(token),
            timeout=timeout_s,
            transport=transport,
        )
        self._retry = retry or RetryPolicy()
        # The latest write position the service answered (`Factledger-Position`), sent with
        # every call: with standbys serving reads, this client reads its own writes.
        self.position: str | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def send(self, call: Call[AnswerT]) -> AnswerT:
        """Sends one call, retrying as the policy says with the same idempotency key."""
        try:
            response: httpx.Response = await self._retry.async_retrying()(
                self._http.request, call.method, call.path, **request_args(call, self.position)
            )
        except httpx.TransportError as exc:
            raise TransportFailedError(type(exc).__name__) from exc
        self.position = later_position(self.position, response)
        return decode(call, response)

    # -- events -----------------------------------------------------------------------------

    def follow_events(
        self,
        *,
        after: str | None = None,
        kinds: Sequence[str] = (),
        types: Sequence[str] = (),
    ) -> AsyncEventFollower:
        """The tenant's events after the cursor `after` (None: from the start), as an endless
        async iterator that reconnects and resumes by itself; its `cursor` is the last event's."""
        query = StreamQuery(after, kinds, types, self.position)
        return AsyncEventFollower(self._http, query, retry=self._retry)

    # -- subjects ---------------------------------------------------------------------------

    async def whoami(self) -> m.WhoAmI:
        return await self.send(c.whoami())

    async def register_subject(
        self, kind: str, external_ref: str, *, idempotency_key: str | None = None
    ) -> m.Subject:
        return await self.send(c.register_subject(kind, external_ref, idempotency_key))

    async def lookup_subject(self, kind: str, external_ref: str) -> m.Subject:
        return await self.send(c.lookup_subject(kind, external_ref))

    async def get_subject(self, subject: Subject = ME) -> m.Subject:
        return await self.send(c.get_subject(subject))

    # -- sessions ---------------------------------------------------------------------------

    async def start_session(
        self,
        session_id: str,
        channel: m.Channel,
        *,
        started_at: datetime | None = None,
        conversation_type: str | None = None,
        subject: Subject = ME,
    ) -> m.Session:
        """Starts a session, dated `started_at` when the conversation began earlier;
        `conversation_type` (e.g. `support_ticket`) picks the extraction guidance."""
        call = c.start_session(subject, session_id, channel, started_at, conversation_type)
        return await self.send(call)

    async def append_message(
        self,
        session_id: str,
        role: m.Role,
        text: str,
        *,
        at: datetime | None = None,
        flagged: bool = False,
        confirms: UUID | None = None,
        declines: UUID | None = None,
        asks: UUID | None = None,
        subject: Subject = ME,
        idempotency_key: str | None = None,
    ) -> m.MessageOutcome:
        """Appends a message. An agent's token appends the agent's lines; the subject's lines
        come from the channel that heard them (a service token, `subject` = their id). The
        agent's line may ask about a pending change (`asks`, its id from
        `context().to_confirm[n].ref`): the subject's next line is judged as the answer, and a
        yes confirms it, a no declines it, when the session ends. `confirms` / `declines` on
        the subject's line are refused (422) unless the line answers that question so."""
        body = c.message_body(
            role, text, at, flagged, confirms=confirms, declines=declines, asks=asks
        )
        return await self.send(c.append_message(subject, session_id, body, idempotency_key))

    async def session_messages(
        self, session_id: str, *, last: int | None = None, subject: Subject = ME
    ) -> m.Transcript:
        return await self.send(c.session_messages(subject, session_id, last))

    async def end_session(
        self,
        session_id: str,
        *,
        summary: Mapping[str, Any] | None = None,
        proposals: Sequence[m.ProposalDraft] = (),
        subject: Subject = ME,
        idempotency_key: str | None = None,
    ) -> m.EndedSession:
        call = c.end_session(subject, session_id, summary, proposals, idempotency_key)
        return await self.send(call)

    # -- recall -----------------------------------------------------------------------------

    async def context(self, topic: str | None = None, *, subject: Subject = ME) -> m.SessionContext:
        return await self.send(c.context(subject, topic))

    async def recall(self, query: str, *, subject: Subject = ME) -> m.RecallAnswer:
        return await self.send(c.recall(subject, query))

    # -- proposals --------------------------------------------------------------------------

    async def propose(
        self, draft: m.ProposalDraft, *, subject: Subject = ME, idempotency_key: str | None = None
    ) -> m.Proposal:
        return await self.send(c.propose(subject, draft, idempotency_key))

    async def confirm(
        self,
        change_id: UUID,
        evidence: m.Evidence,
        *,
        subject: Subject = ME,
        idempotency_key: str | None = None,
    ) -> m.Decision:
        body = {"evidence": evidence.model_dump(mode="json")}
        return await self.send(c.decide(subject, change_id, "confirm", body, idempotency_key))

    async def approve(
        self,
        subject: Subject,
        change_id: UUID,
        *,
        note: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.Decision:
        body = {} if note is None else {"note": note}
        return await self.send(c.decide(subject, change_id, "approve", body, idempotency_key))

    async def reject(
        self, subject: Subject, change_id: UUID, reason: str, *, idempotency_key: str | None = None
    ) -> m.Decision:
        body = {"reason": reason}
        return await self.send(c.decide(subject, change_id, "reject", body, idempotency_key))

    async def pending(
        self, *, limit: int = 50, cursor: str | None = None, **filters: str | None
    ) -> m.PendingList:
        """A page of the tenant's review queue, oldest first; `filters` are the API's
        (`field`, `origin`, `kind`, `proposer`, `conversation_type`, `q`, `older_than`,
        `newer_than`, `group`, `subject_id`), and `total` counts every match."""
        return await self.send(c.pending(limit, cursor, filters))

    async def pending_groups(
        self, *, limit: int = 50, offset: int = 0, **filters: str | None
    ) -> m.PendingGroups:
        """Identical proposals across subjects, largest group first."""
        return await self.send(c.pending_groups(limit, offset, filters))

    async def decide_pending(
        self,
        decision: str,
        *,
        changes: list[tuple[UUID, UUID]] | None = None,
        filters: dict[str, str] | None = None,
        snapshot: str | None = None,
        expected_count: int | None = None,
        note: str | None = None,
        reason: str | None = None,
        idempotency_key: str | None = None,
    ) -> m.Decisions:
        """One decision (`approve` or `reject`) on many pending changes: `changes` as
        (subject id, change id) pairs, or every change `filters` matches up to `snapshot`
        (from the page you counted), at most `expected_count` of them. Each change gets its
        own decision; the same `idempotency_key` on a retry decides nothing twice."""
        body = c.decision_body(decision, changes, filters, snapshot, expected_count, note, reason)
        return await self.send(c.decide_pending(body, idempotency_key))

    # -- forget -----------------------------------------------------------------------------

    async def forget_field(
        self,
        field: str,
        reason: str,
        *,
        items: Sequence[str] | None = None,
        subject: Subject = ME,
        idempotency_key: str | None = None,
    ) -> m.Forgotten:
        """Forgets the field; with `items`, only those items of its list (the rest stay)."""
        return await self.send(c.forget_field(subject, field, reason, items, idempotency_key))

    async def forget_memory(
        self,
        memory_id: str,
        reason: str,
        *,
        subject: Subject = ME,
        idempotency_key: str | None = None,
    ) -> m.Forgotten:
        body = {"memory_id": memory_id, "reason": reason}
        return await self.send(c.forget(subject, body, idempotency_key))

    # -- profile and history ----------------------------------------------------------------

    async def profile(
        self,
        *,
        subject: Subject = ME,
        as_of: datetime | None = None,
        clock: m.Clock | None = None,
    ) -> m.Profile:
        """The current profile, or the one at `as_of` on `clock` (the server's default,
        `said`, when None)."""
        return await self.send(c.profile(subject, as_of, clock))

    async def profile_version(self, version: int, *, subject: Subject = ME) -> m.Profile:
        return await self.send(c.profile_version(subject, version))

    async def history(self, field: str | None = None, *, subject: Subject = ME) -> m.History:
        return await self.send(c.history(subject, field))

    async def diff(self, from_version: int, to_version: int, *, subject: Subject = ME) -> m.Diff:
        return await self.send(c.diff(subject, from_version, to_version))

    async def diff_at(
        self,
        from_as_of: datetime,
        to_as_of: datetime,
        *,
        clock: m.Clock | None = None,
        subject: Subject = ME,
    ) -> m.Diff:
        """What changed between the profiles at two times on one clock."""
        return await self.send(c.diff_at(subject, from_as_of, to_as_of, clock))

    async def events(self, subject: Subject, *, after: int = 0, limit: int = 100) -> m.EventPage:
        return await self.send(c.events(subject, after, limit))

    # -- operations -------------------------------------------------------------------------

    async def dead_letters(self, *, limit: int = 100, after: str | None = None) -> m.DeadLetters:
        return await self.send(c.dead_letters(limit, after))

    async def retry_dead_letters(self, item_id: str | None = None) -> m.Retried:
        return await self.send(c.retry_dead_letters(item_id))
