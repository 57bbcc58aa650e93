"""`LedgerCore`: the ledger's `eventsourcing` Application and the machinery its commands share.

Load, act, save with retries on a concurrent writer's win (`_run`), the reads, and the
store's set-up (the recorder that reports unavailability, the crypto-shredding mapper, the
`after_commit` listeners). The commands live in `ledger` (`Ledger`), `forgetting` and
`past_sessions`, as mixins over this class.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast
from uuid import UUID

import structlog
from eventsourcing.application import (
    AggregateNotFoundError,
    Application,
    Repository,
    project_aggregate,
)
from eventsourcing.domain import DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import (
    ApplicationRecorder,
    EventStore,
    IntegrityError,
    JSONTranscoder,
    Mapper,
    Recording,
    Transcoder,
)
from eventsourcing.utils import strtobool

from factledger.application.clocks import Clock, SystemClock
from factledger.application.errors import ConcurrencyError, NotFoundError
from factledger.application.ledger.cipher import (
    Resealed,
    ShreddingMapper,
    fingerprint_scope,
    session_scopes,
)
from factledger.application.ledger.commands import CommandResult
from factledger.application.ledger.event_store_errors import (
    UNREACHABLE,
    reporting_unavailability,
    unavailable,
)
from factledger.application.ledger.idempotency import JsonBody
from factledger.application.ledger.keyed_event_store import KeyedEventStore
from factledger.application.ledger.lines_alone import LinesAlone
from factledger.application.ledger.ports import KeyStore
from factledger.application.ledger.request_fingerprints import RequestFingerprints
from factledger.application.ledger.responses import ResponseWrite, pending_response
from factledger.application.ledger.snapshots.repository import SnapshottingRepository
from factledger.application.ledger.snapshots.store import (
    DEFAULT_INTERVAL,
    SubjectSnapshots,
    is_due,
)
from factledger.application.ledger.subject_ids import SubjectIds
from factledger.application.ledger.tenants import TenantCache
from factledger.application.ledger.transcoder import TopLevelJSONTranscoder
from factledger.domain.errors import SubjectErasedError
from factledger.domain.events import FactForgotten, SubjectKeyRotated, SubjectRegistered
from factledger.domain.hedges import TentativeReader
from factledger.domain.sessions import SessionRecord
from factledger.domain.subject import Subject, is_keyed
from factledger.domain.values import ProfileSchema

MAX_ATTEMPTS = 12
# Backoff after a lost race: a random pause up to a ceiling that doubles from the first to the
# last (full jitter). Writers that collided spread out whatever a save costs on the machine: a
# ceiling that grew by a fixed step each attempt stayed below a loaded machine's save time,
# and one writer could lose every attempt.
FIRST_BACKOFF_S, LONGEST_BACKOFF_S = 0.005, 0.25


def back_off(attempt: int) -> None:
    """Sleeps before retry `attempt` (0 first) of a save that lost to a concurrent writer."""
    ceiling = min(LONGEST_BACKOFF_S, FIRST_BACKOFF_S * 2**attempt)
    time.sleep(random.uniform(0, ceiling))  # noqa: S311 - spreading, not secrecy


# Events between two snapshots of a subject in the ledger's env (0: no snapshots).
SNAPSHOT_INTERVAL = "FACTLEDGER_SNAPSHOT_INTERVAL"
log = structlog.get_logger(__name__)
Action = Callable[[Subject], object]


@dataclass(frozen=True, slots=True)
class SubjectAsRead:
    """A subject and the events it was rebuilt from, read together from one server."""

    subject: Subject
    events: Sequence[DomainEventProtocol[UUID]]


class LedgerCore(Application[UUID]):
    """The Application under `Ledger`: set-up, reads and the load-act-save loop."""

    # Creates the library's snapshot table; the library itself never takes or reads one
    # (`SubjectSnapshots` and `SnapshottingRepository` do, sealed under deletable keys).
    is_snapshotting_enabled = True

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        keys: KeyStore,
        clock: Clock | None = None,
        schemas: Mapping[str, ProfileSchema] | None = None,
        tentative: TentativeReader | None = None,
    ) -> None:
        self.clock: Clock = clock or SystemClock()
        self.schemas: Mapping[str, ProfileSchema] = schemas or {}
        # Reads whether a quoted sentence is tentative (the learned judgement, composed once
        # its model has loaded); without it a stated change's hedge is not checked.
        self.tentative: TentativeReader | None = tentative
        # Set before the library builds the mapper, which needs it. No default: a key store
        # in memory beside a durable event store would lose every personal field.
        self.keys: KeyStore = keys
        self._tenants = TenantCache()
        # Called after every commit, in the saving thread (e.g. to wake the sync worker).
        self.after_commit: list[Callable[[], None]] = []
        super().__init__(env)
        # Where the ledger's history reads go (a subject's events, the notification log for
        # the event stream): the store itself, unless `read_history_from` routes them.
        self.history: EventStore[UUID] = self.events
        self.history_log: ApplicationRecorder = self.recorder  # the notification log's reads
        self.subject_ids = SubjectIds(
            keys,
            registered=self._registered,
            keyed_ids_exist=self._keyed_ids_exist,
            any_registered=self._any_registered,
        )
        # Keys the request fingerprints the API's idempotency store keeps.
        self.request_fingerprints = RequestFingerprints(keys)
        # Subjects whose every line is sealed alone: a forget need not look for old lines.
        self.lines_alone = LinesAlone()

    def construct_recorder(self) -> ApplicationRecorder:
        # Opening the store creates its tables: a database it cannot reach fails here first.
        try:
            recorder = super().construct_recorder()
        except UNREACHABLE as exc:
            raise unavailable() from exc
        return reporting_unavailability(recorder)

    def construct_transcoder(self) -> Transcoder:
        transcoder = super().construct_transcoder()
        if type(transcoder) is not JSONTranscoder:
            return transcoder  # one the environment chose: left as it is
        fast = TopLevelJSONTranscoder()
        self.register_transcodings(fast)
        return fast

    def construct_event_store(self) -> EventStore[UUID]:
        return KeyedEventStore(mapper=self.mapper, recorder=self.recorder)

    def construct_mapper(self) -> Mapper[UUID]:
        mapper = ShreddingMapper(
            transcoder=self.construct_transcoder(),
            compressor=self.factory.compressor(),
            cipher=self.factory.cipher(),
            keys=self.keys,
        )
        mapper.resealed_of = self.resealed_of
        return mapper

    def resealed_of(self, subject_id: UUID) -> Resealed:
        """What the subject's key rotations sealed again, by (event version, field), the
        latest rotation's value where two name the same field. Read from the store itself
        (its key deletions are the primary's too)."""
        found: dict[tuple[int, str], Any] = {}
        for stored in self.recorder.select_events(subject_id):
            if stored.topic != SubjectKeyRotated.TOPIC:
                continue
            event = self.mapper.to_domain_event(stored)
            if isinstance(event, SubjectKeyRotated):
                for entry in event.resealed:
                    found[(int(str(entry["version"])), str(entry["field"]))] = entry.get("value")
        return found

    def construct_repository(self) -> Repository[UUID]:
        # The library's settings, read as its own `construct_repository` reads them.
        interval = int(self.env.get(SNAPSHOT_INTERVAL) or DEFAULT_INTERVAL)
        snapshots = None
        if self.snapshots is not None and interval > 0:
            snapshots = SubjectSnapshots(self.snapshots.recorder, self.keys, interval=interval)
        cache_maxsize = self.env.get(self.AGGREGATE_CACHE_MAXSIZE)
        return SnapshottingRepository(
            event_store=self.events,
            snapshot_store=None,  # ours, sealed: never the library's unsealed reads
            snapshots=snapshots,
            cache_maxsize=int(cache_maxsize) if cache_maxsize else None,
            fastforward=strtobool(self.env.get(self.AGGREGATE_CACHE_FASTFORWARD, "y")),
            fastforward_skipping=strtobool(
                self.env.get(self.AGGREGATE_CACHE_FASTFORWARD_SKIPPING, "n")
            ),
            deepcopy_from_cache=strtobool(self.env.get(self.DEEPCOPY_FROM_AGGREGATE_CACHE, "y")),
        )

    @property
    def subject_snapshots(self) -> SubjectSnapshots | None:
        repository = self.repository
        return repository.snapshots if isinstance(repository, SnapshottingRepository) else None

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        before = {
            obj.id: obj.version - len(obj.pending_events)
            for obj in objs
            if isinstance(obj, Subject)
        }
        recordings = super().save(*objs, **kwargs)
        for listener in self.after_commit:
            listener()
        self._snapshot_if_due(objs, before)
        return recordings

    def _snapshot_if_due(self, objs: Sequence[object], before: Mapping[UUID, int]) -> None:
        """After the commit: a snapshot every `interval` events, sealed off the request's path.
        It is a cache, so failing to write one is logged and the command's answer stands."""
        snapshots = self.subject_snapshots
        if snapshots is None:
            return
        for obj in objs:
            if isinstance(obj, Subject) and is_due(
                snapshots.interval, before=before[obj.id], after=obj.version
            ):
                snapshots.take_later(obj)

    def close(self) -> None:
        snapshots = self.subject_snapshots
        if snapshots is not None:
            snapshots.close()
        super().close()

    # -- reads ---------------------------------------------------------------------------------

    def read_history_from(self, recorder: ApplicationRecorder) -> None:
        """Reads of the ledger's history (`history`) go through `recorder` (one that reads a
        hot standby when the request may), decoded by this ledger's mapper and its keys: a
        forgotten field's key is deleted on the primary, so its value stays unreadable
        whichever server holds the event. Commands and the followers keep the store's own."""
        self.history = KeyedEventStore(self.mapper, recorder)
        self.history_log = recorder

    def subject(self, tenant: str, subject_id: UUID) -> Subject:
        """Loads a subject of this tenant; any other case is `NotFoundError` (no existence leak)."""
        try:
            subject = cast("Subject", self.repository.get(subject_id))
        except AggregateNotFoundError as exc:
            raise NotFoundError(f"subject {subject_id}") from exc
        if subject.tenant != tenant:
            raise NotFoundError(f"subject {subject_id}")
        return subject

    def subject_as_read(self, tenant: str, subject_id: UUID) -> SubjectAsRead:
        """The subject and its events from one read of the ledger's history (a hot standby's
        when the request may read one), the subject rebuilt from those very events: a page
        that shows both never mixes two servers, or two moments of one."""
        events = list(self.history.get(subject_id))
        subject = cast("Subject | None", project_aggregate(None, events))
        if subject is None or subject.tenant != tenant:
            raise NotFoundError(f"subject {subject_id}")
        return SubjectAsRead(subject, events)

    def read_subject(self, tenant: str, subject_id: UUID) -> Subject:
        """A subject for a request that only reads: rebuilt from the history when that is
        routed (it may read a standby), from the repository and its cache otherwise."""
        if self.history is self.events:
            return self.subject(tenant, subject_id)
        return self.subject_as_read(tenant, subject_id).subject

    def tenant_of(self, subject_id: UUID) -> str:
        """The tenant a subject was registered in, from its first event alone (a subject never
        changes tenant); `NotFoundError` when there is no such subject."""
        tenant = self._tenants.get(subject_id)
        if tenant is None:
            tenant = self._registered_tenant(subject_id)
            self._tenants.put(subject_id, tenant)
        return tenant

    def _registered_tenant(self, subject_id: UUID) -> str:
        """The tenant as the registration stored it, in clear: one statement, no key read and
        no aggregate. Opening the registration's sealed reference (a key-store round trip)
        was more than half of what a check of a subject met for the first time cost."""
        first = self.recorder.select_events(subject_id, lte=1, limit=1)
        if not first or first[0].topic != SubjectRegistered.TOPIC:
            raise NotFoundError(f"subject {subject_id}")
        mapper = self.mapper
        if isinstance(mapper, ShreddingMapper):
            state = mapper.stored_state(first[0])
        else:
            state = vars(mapper.to_domain_event(first[0]))
        return str(state["tenant"])

    def known_tenant(self, subject_id: UUID) -> str | None:
        """The subject's tenant when `tenant_of` has read it before; None otherwise. Never
        blocks, so async callers may call it without a thread."""
        return self._tenants.get(subject_id)

    def subject_id_for(self, tenant: str, kind: str, external_ref: str) -> UUID:
        """The id of the reference's first subject (registered or not): keyed under the
        deployment's key, or the legacy id of a subject registered before keyed ids. A read
        the first time this process meets the reference; `SubjectIdKeyLostError` when the
        key is gone."""
        return self.subject_ids.first(tenant, kind, external_ref)

    def _registered(self, subject_id: UUID) -> bool:
        try:
            self.tenant_of(subject_id)
        except NotFoundError:
            return False
        return True

    def _any_registered(self) -> bool:
        """Whether the log holds any subject's registration: one page of one notification
        (run when the id key is created, so once per deployment)."""
        page = self.recorder.select_notifications(
            start=0, limit=1, topics=[SubjectRegistered.TOPIC], inclusive_of_start=False
        )
        return bool(page)

    def _keyed_ids_exist(self) -> bool:
        """Whether any subject was registered under a keyed id: one pass over the log's
        registrations, stopping at the first keyed one (run when the key store has no key
        of subject ids, so once per deployment unless the key is lost)."""
        topics = [SubjectRegistered.TOPIC]
        after = 0
        while True:
            page = self.recorder.select_notifications(
                start=after, limit=1000, topics=topics, inclusive_of_start=False
            )
            if not page:
                return False
            if any(is_keyed(UUID(str(n.originator_id))) for n in page):
                return True
            after = page[-1].id

    # -- machinery -----------------------------------------------------------------------------

    def _now(self) -> datetime:
        return self.clock.now()

    def fingerprint_key(self, subject: Subject, session: SessionRecord | None = None) -> bytes:
        """The key the subject's session fingerprints are keyed under. An erased subject's is
        gone, and the ledger never writes again to a scope it shredded: refused.

        With a `session` not recorded yet, the keys its record will be sealed under are
        fetched (created) in the same call: the save then only reads them, so a session's
        first keys cost the key store one transaction rather than two (a commit each, on
        SQLite a sync to disk each). A session the subject then refuses leaves keys that seal
        nothing, under the subject's prefix (an erasure takes them)."""
        if subject.erased:
            raise SubjectErasedError(f"subject {subject.id}")
        scope = fingerprint_scope(subject.id)
        if session is None or session.session_id in subject.sessions:
            return self.keys.current(scope)[1]
        sealed = session_scopes(subject.id, session.session_id, len(session.transcript))
        return self.keys.current_many([scope, *sealed])[scope][1]

    def record_session_in(self, subject: Subject, session: SessionRecord) -> bool:
        """`Subject.record_session` with the subject's fingerprint key."""
        key = self.fingerprint_key(subject, session)
        return subject.record_session(session, at=self._now(), fingerprint_key=key)

    def _run(
        self,
        tenant: str,
        subject_id: UUID,
        command_id: str | None,
        action: Action,
        *,
        erasing: bool = False,
    ) -> CommandResult:
        """Load, act, save; on a concurrent writer's win, reload and act again. On an erased
        subject only the erasure's own retry is answered: any other command, a replay of one
        it ran before included, is refused (`SubjectErasedError`)."""
        for attempt in range(MAX_ATTEMPTS):
            subject = self.subject(tenant, subject_id)
            if subject.erased and not erasing:
                raise SubjectErasedError(f"subject {subject_id}")
            if command_id is not None and subject.has_seen(command_id):
                # Its events are recorded, but the keys they forget may not be deleted yet
                # (the first attempt stopped between the two): deleting them again is safe.
                self._finish_forgets_of(subject, command_id)
                return self._result(subject, position=None)
            action(subject)
            if not subject.pending_events:
                return self._result(subject, position=None)
            events = [type(e).__name__ for e in subject.pending_events]
            forgets = [e for e in subject.pending_events if isinstance(e, FactForgotten)]
            response = self._response_for(subject)
            try:
                recordings = self.save(subject, response=response)
            except IntegrityError:
                log.info("ledger.write_conflicted", subject_id=str(subject_id), attempt=attempt)
                back_off(attempt)
                continue
            position = recordings[-1].notification.id
            if forgets:
                self._shred(subject, forgets)
            if response is not None and response.executed:
                response.pending.written = True  # committed with the events
            log.info(
                "ledger.events_saved",
                subject_id=str(subject_id),
                events=events,
                position=position,
                attempts=attempt + 1,
            )
            return self._result(subject, position=position, forgot=bool(forgets))
        log.warning("ledger.write_gave_up", subject_id=str(subject_id), attempts=MAX_ATTEMPTS)
        raise ConcurrencyError(f"subject {subject_id}: gave up after {MAX_ATTEMPTS} attempts")

    def _shred(self, subject: Subject, forgets: Sequence[FactForgotten]) -> None:
        """Deletes the keys of what a command just forgot (however it came to forget it: a
        forget asked directly, a request to forget approved in a decision, a memory by id),
        a field's through the key generation its forget named. A deletion
        interrupted here is finished by the command's retry (`_finish_forgets_of`) or by the
        next pass over the recorded forgets (`finish_forgetting`)."""

    def _finish_forgets_of(self, subject: Subject, command_id: str) -> None:
        """Deletes again the keys of the fields that the already recorded command
        `command_id` forgot."""

    def _response_for(self, subject: Subject) -> ResponseWrite | None:
        """The running request's response, for the recorder to write with the events."""
        pending = pending_response()
        if pending is None or pending.scope.subject_id != subject.id:
            return None

        def body(positions: Sequence[int]) -> JsonBody:
            result = self._result(subject, position=positions[-1] if positions else None)
            pending.body = pending.render(subject, result)
            return pending.body

        return ResponseWrite(pending, body)

    @staticmethod
    def _result(subject: Subject, *, position: int | None, forgot: bool = False) -> CommandResult:
        return CommandResult(
            subject_id=subject.id,
            applied=position is not None,
            position=position,
            subject_version=subject.version,
            profile_version=subject.profile_version,
            subject=subject,
            forgot=forgot,
        )
