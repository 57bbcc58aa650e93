"""The subject ledger: use cases on an `eventsourcing` Application.

Public API (recall, the sync and the HTTP API build on it; every method is synchronous and blocking,
so async callers wrap it in `asyncio.to_thread`):

- `Ledger(env, clock=..., schemas=..., keys=...)`: `env` is the library's persistence settings
  (`PERSISTENCE_MODULE` = `eventsourcing.popo` | `eventsourcing.sqlite` | `eventsourcing.postgres`
  and their options); `api.bootstrap` builds it from `Settings`. Close it with `close()` or
  use it as a context manager. `keys` is the `KeyStore` of the deletable keys that encrypt
  personal payload fields (ADR 0003); it must persist alongside the event store.
- Commands (`application.commands`) -> `CommandResult`:
  `register_subject`, `record_session`, `record_past_session` (an imported session, in
  time order), `propose_change`, `end_session` (a session and its
  proposals in one save), `confirm_change` (by the subject, evidence required),
  `approve_change` / `reject_change` (by a reviewer), `review_session` (the product's model:
  its proposals from one session, what they supersede, and the review marker), `forget_field`,
  `forget_memory`, `expire_memory`, `expire_field`, `erase_subject`. Domain rules raise
  `domain.errors.DomainError` subclasses; an unknown subject or one of another tenant raises
  `NotFoundError`; lasting contention raises `ConcurrencyError`; an event store that cannot be
  reached raises `EventStoreUnavailableError` (commands, reads and followers alike).
- Reads: `subject(tenant, subject_id)` loads the aggregate (for checks and tests; hot paths
  read the projections), `tenant_of(subject_id)` reads only the subject's first event (once;
  then a bounded cache), `subject_id_for(tenant, kind, external_ref)`.
- Every event is also in the application's notification log, read in order by
  `projections.follower.read_events(ledger, after=position)`.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast
from uuid import UUID

import structlog
from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import ApplicationRecorder, IntegrityError, Mapper, Recording

from factledger.application.clocks import SystemClock
from factledger.application.errors import ConcurrencyError, NotFoundError, SessionOrderError
from factledger.application.ledger.cipher import ShreddingMapper, field_scope
from factledger.application.ledger.commands import (
    ApproveChange,
    CommandResult,
    ConfirmChange,
    EraseSubject,
    ExpireField,
    ExpireMemory,
    ForgetField,
    ForgetMemory,
    ProposeChange,
    RecordSession,
    RegisterSubject,
    RejectChange,
    ReviewSession,
)
from factledger.application.ledger.event_store_errors import (
    UNREACHABLE,
    reporting_unavailability,
    unavailable,
)
from factledger.application.ledger.key_store import InMemoryKeyStore, KeyStore
from factledger.application.ledger.records import proposal_of, session_record
from factledger.application.ledger.tenants import TenantCache
from factledger.application.ports import Clock
from factledger.application.proposals.plan import plan_changes
from factledger.domain.errors import DomainError, FieldNotPresentError, SessionConflictError
from factledger.domain.proposal import Decision
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.subject import Subject, subject_id_for
from factledger.domain.values import OPEN_SCHEMA, ProfileSchema

MAX_ATTEMPTS = 12
log = structlog.get_logger(__name__)
Action = Callable[[Subject], object]


class Ledger(Application[UUID]):
    """The subject ledger. One instance per process; several processes may share a store."""

    name = "Ledger"  # pinned: it names the PostgreSQL tables and the env prefix
    # Commands reload their subject; the cache (fast-forwarded from the store on every get,
    # so other writers are seen) saves replaying the whole stream each time.
    env = {"AGGREGATE_CACHE_MAXSIZE": "1000"}

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        clock: Clock | None = None,
        schemas: Mapping[str, ProfileSchema] | None = None,
        keys: KeyStore | None = None,
    ) -> None:
        self.clock: Clock = clock or SystemClock()
        self.schemas: Mapping[str, ProfileSchema] = schemas or {}
        # Set before the library builds the mapper, which needs it (ADR 0003).
        self.keys: KeyStore = keys or InMemoryKeyStore()
        self._tenants = TenantCache()
        # Called after every commit, in the saving thread (e.g. to wake the sync worker).
        self.after_commit: list[Callable[[], None]] = []
        super().__init__(env)

    def construct_recorder(self) -> ApplicationRecorder:
        # Opening the store creates its tables: a database it cannot reach fails here first.
        try:
            recorder = super().construct_recorder()
        except UNREACHABLE as exc:
            raise unavailable() from exc
        return reporting_unavailability(recorder)

    def construct_mapper(self) -> Mapper[UUID]:
        return ShreddingMapper(
            transcoder=self.construct_transcoder(),
            compressor=self.factory.compressor(),
            cipher=self.factory.cipher(),
            keys=self.keys,
        )

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        recordings = super().save(*objs, **kwargs)
        for listener in self.after_commit:
            listener()
        return recordings

    # -- commands ------------------------------------------------------------------------------

    def register_subject(self, cmd: RegisterSubject) -> CommandResult:
        subject = Subject.register(cmd.tenant, cmd.kind, cmd.external_ref, at=self.clock.now())
        try:
            recordings = self.save(subject)
        except IntegrityError:
            # Already registered (a retry, or a concurrent twin): a no-op, unless the id is
            # taken in another tenant, which the deterministic id makes impossible.
            existing = self.subject(cmd.tenant, subject.id)
            return self._result(existing, position=None)
        return self._result(subject, position=recordings[-1].notification.id)

    def record_session(self, cmd: RecordSession) -> CommandResult:
        session = session_record(cmd)
        return self._run(
            cmd.tenant, cmd.subject_id, None, lambda s: s.record_session(session, at=self._now())
        )

    def record_past_session(self, cmd: RecordSession) -> CommandResult:
        """Records an imported session (ADR 0021): a no-op when it is recorded already with
        the same content; `SessionOrderError` when the subject has a session that started
        later, since the proposals step reviews a subject's sessions in recording order."""
        session = session_record(cmd)

        def record(subject: Subject) -> object:
            if cmd.session_id not in subject.sessions:
                starts = (s.started_at for s in subject.sessions.values())
                if cmd.started_at < max(starts, default=cmd.started_at):
                    raise SessionOrderError(cmd.session_id)
            return subject.record_session(session, at=self._now())

        return self._run(cmd.tenant, cmd.subject_id, None, record)

    def propose_change(self, cmd: ProposeChange) -> CommandResult:
        proposal = proposal_of(cmd)

        def propose(subject: Subject) -> object:
            schema = self.schemas.get(subject.kind, OPEN_SCHEMA)
            return subject.propose(proposal, schema, at=self._now())

        return self._run(cmd.tenant, cmd.subject_id, cmd.command_id, propose)

    def end_session(self, cmd: RecordSession, proposals: Sequence[ProposeChange]) -> CommandResult:
        """Records a session and the proposals it supports in one save: a proposal that breaks
        a rule records nothing. A session already recorded (by a twin) adds nothing."""
        session, built = session_record(cmd), [proposal_of(p) for p in proposals]
        # A twin (or a retry after a save whose answer was lost) finds the session recorded:
        # the same proposals are a no-op, others a conflict, decided in the same load.

        def end(subject: Subject) -> object:
            if cmd.session_id in subject.sessions:
                if any(p.change_id not in subject.changes for p in built):
                    raise SessionConflictError(
                        f"session {cmd.session_id}: already ended with other proposals"
                    )
                return None
            schema = self.schemas.get(subject.kind, OPEN_SCHEMA)
            subject.record_session(session, at=self._now())
            return [subject.propose(p, schema, at=self._now()) for p in built]

        return self._run(cmd.tenant, cmd.subject_id, None, end)

    def review_session(self, cmd: ReviewSession) -> CommandResult:
        """Records a model's proposals from one session, the open changes they supersede and
        that the session was reviewed, in one save. A planned change that breaks a domain rule
        is left out (logged by error type); the others still go in."""

        def review(subject: Subject) -> object:
            if subject.has_reviewed(cmd.session_id):
                return None
            schema = self.schemas.get(subject.kind, OPEN_SCHEMA)
            proposed, superseded = [], []
            for planned in plan_changes(subject, cmd.candidates, cmd.model, cmd.session_id):
                proposal = planned.proposal
                try:
                    subject.propose(proposal, schema, at=self._now())
                except DomainError as exc:
                    log.info(
                        "proposals.change_refused",
                        subject_id=str(cmd.subject_id),
                        field=proposal.field,
                        error_type=type(exc).__name__,
                    )
                    continue
                proposed.append(proposal.change_id)
                for older in planned.supersedes:
                    subject.supersede(older, by=proposal.change_id, at=self._now())
                    superseded.append(older)
            subject.mark_reviewed(
                cmd.session_id,
                by=cmd.model,
                proposed=proposed,
                superseded=superseded,
                at=self._now(),
            )
            return proposed

        return self._run(cmd.tenant, cmd.subject_id, None, review)

    def confirm_change(self, cmd: ConfirmChange) -> CommandResult:
        def confirm(subject: Subject) -> object:
            by = Actor(ActorKind.SUBJECT, subject.external_ref)
            decision = Decision(by=by, evidence=cmd.evidence, command_id=cmd.command_id)
            subject.confirm(cmd.change_id, decision, at=self._now())
            return True

        return self._run(cmd.tenant, cmd.subject_id, cmd.command_id, confirm)

    def approve_change(self, cmd: ApproveChange) -> CommandResult:
        decision = Decision(
            by=Actor(ActorKind.STAFF, cmd.reviewer_id), command_id=cmd.command_id, note=cmd.note
        )
        return self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.confirm(cmd.change_id, decision, at=self._now()),
        )

    def reject_change(self, cmd: RejectChange) -> CommandResult:
        decision = Decision(by=cmd.rejected_by, command_id=cmd.command_id)
        return self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.reject(cmd.change_id, by=decision, reason=cmd.reason, at=self._now()),
        )

    def forget_field(self, cmd: ForgetField) -> CommandResult:
        """Records the forgetting, then deletes the field's keys: from then on its values,
        conditions, quotes and rationales are unreadable in the event store too."""
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        scope = field_scope(cmd.subject_id, cmd.field)
        try:
            result = self._run(
                cmd.tenant,
                cmd.subject_id,
                cmd.command_id,
                lambda s: s.forget_field(cmd.field, by=decision, reason=cmd.reason, at=self._now()),
            )
        except FieldNotPresentError:
            # A forget interrupted between its event and the key deletion: finish it.
            if cmd.field in self.subject(cmd.tenant, cmd.subject_id).forgotten_fields:
                self._forget_keys(cmd.subject_id, scope)
            raise
        self._forget_keys(cmd.subject_id, scope)
        return result

    def _forget_keys(self, subject_id: UUID, scope: str) -> None:
        deleted = self.keys.forget(scope)
        log.info("ledger.keys_forgotten", subject_id=str(subject_id), keys=deleted)
        if isinstance(self.mapper, ShreddingMapper):
            self.mapper.forget_cached()
        # The cached subject still holds the forgotten values in memory: drop it.
        cache = self.repository.cache
        if cache is not None:
            with contextlib.suppress(KeyError):
                cache.get(subject_id, evict=True)

    def erase_subject(self, cmd: EraseSubject) -> CommandResult:
        """Records the erasure, then deletes the subject's key and every field key. A retry,
        or any later command, finishes an erasure whose key deletion was interrupted."""
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        try:
            result = self._run(
                cmd.tenant,
                cmd.subject_id,
                cmd.command_id,
                lambda s: s.erase(by=decision, reason=cmd.reason, at=self._now()),
            )
        finally:
            subject = self.subject(cmd.tenant, cmd.subject_id)
            if subject.erased:
                for field in sorted(subject.forgotten_fields):
                    self.keys.forget(field_scope(cmd.subject_id, field))
                self._forget_keys(cmd.subject_id, str(cmd.subject_id))
        return result

    def forget_memory(self, cmd: ForgetMemory) -> CommandResult:
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        return self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.forget_memory(
                cmd.memory_id, by=decision, reason=cmd.reason, at=self._now()
            ),
        )

    def expire_memory(self, cmd: ExpireMemory) -> CommandResult:
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        return self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.expire_memory(cmd.memory_id, cmd.valid_until, by=decision, at=self._now()),
        )

    def expire_field(self, cmd: ExpireField) -> CommandResult:
        """Records the field's expiry; from `valid_until` on, readers that hold a clock stop
        serving it (nothing is written at that time)."""
        decision = Decision(by=cmd.requested_by, command_id=cmd.command_id)
        return self._run(
            cmd.tenant,
            cmd.subject_id,
            cmd.command_id,
            lambda s: s.expire_field(
                cmd.field, cmd.valid_until, by=decision, at=self._now(), reason=cmd.reason
            ),
        )

    # -- reads ---------------------------------------------------------------------------------

    def subject(self, tenant: str, subject_id: UUID) -> Subject:
        """Loads a subject of this tenant; any other case is `NotFoundError` (no existence leak)."""
        try:
            subject = cast("Subject", self.repository.get(subject_id))
        except AggregateNotFoundError as exc:
            raise NotFoundError(f"subject {subject_id}") from exc
        if subject.tenant != tenant:
            raise NotFoundError(f"subject {subject_id}")
        return subject

    def tenant_of(self, subject_id: UUID) -> str:
        """The tenant a subject was registered in, from its first event alone (a subject never
        changes tenant); `NotFoundError` when there is no such subject."""
        tenant = self._tenants.get(subject_id)
        if tenant is None:
            try:
                registered = cast("Subject", self.repository.get(subject_id, version=1))
            except AggregateNotFoundError as exc:
                raise NotFoundError(f"subject {subject_id}") from exc
            tenant = registered.tenant
            self._tenants.put(subject_id, tenant)
        return tenant

    def known_tenant(self, subject_id: UUID) -> str | None:
        """The subject's tenant when `tenant_of` has read it before; None otherwise. Never
        blocks, so async callers may call it without a thread."""
        return self._tenants.get(subject_id)

    @staticmethod
    def subject_id_for(tenant: str, kind: str, external_ref: str) -> UUID:
        return subject_id_for(tenant, kind, external_ref)

    # -- machinery -----------------------------------------------------------------------------

    def _now(self) -> datetime:
        return self.clock.now()

    def _run(
        self, tenant: str, subject_id: UUID, command_id: str | None, action: Action
    ) -> CommandResult:
        """Load, act, save; on a concurrent writer's win, reload and act again."""
        for attempt in range(MAX_ATTEMPTS):
            subject = self.subject(tenant, subject_id)
            if command_id is not None and subject.has_seen(command_id):
                return self._result(subject, position=None)
            action(subject)
            if not subject.pending_events:
                return self._result(subject, position=None)
            events = [type(e).__name__ for e in subject.pending_events]
            try:
                recordings = self.save(subject)
            except IntegrityError:
                log.info("ledger.write_conflicted", subject_id=str(subject_id), attempt=attempt)
                # Jittered backoff: writers that collided should not collide again in lockstep.
                time.sleep(random.uniform(0, 0.005 * (attempt + 1)))  # noqa: S311
                continue
            position = recordings[-1].notification.id
            log.info(
                "ledger.events_saved",
                subject_id=str(subject_id),
                events=events,
                position=position,
                attempts=attempt + 1,
            )
            return self._result(subject, position=position)
        log.warning("ledger.write_gave_up", subject_id=str(subject_id), attempts=MAX_ATTEMPTS)
        raise ConcurrencyError(f"subject {subject_id}: gave up after {MAX_ATTEMPTS} attempts")

    @staticmethod
    def _result(subject: Subject, *, position: int | None) -> CommandResult:
        return CommandResult(
            subject_id=subject.id,
            applied=position is not None,
            position=position,
            subject_version=subject.version,
            profile_version=subject.profile_version,
            subject=subject,
        )
