"""The subject ledger: use cases on an `eventsourcing` Application.

Public API (recall, the sync and the HTTP API build on it; every method is synchronous and blocking,
so async callers wrap it in `asyncio.to_thread`):

- `Ledger(env, clock=..., schemas=..., keys=...)`: `env` is the library's persistence settings
  (`PERSISTENCE_MODULE` = `eventsourcing.popo` | `eventsourcing.sqlite` | `eventsourcing.postgres`
  and their options); `api.bootstrap` builds it from `Settings`. Close it with `close()` or
  use it as a context manager. `keys` is the `KeyStore` of the deletable keys that encrypt
  personal payload fields; it must persist alongside the event store.
- Commands (`application.commands`) -> `CommandResult`:
  `register_subject`, `record_session`, `record_past_session(s)` (imported sessions, in any
  order of time), `propose_change`, `end_session` (a session and its
  proposals in one save), `confirm_change` (by the subject, evidence required),
  `approve_change` / `reject_change` (by a reviewer), `review_session` (the product's model:
  its proposals from one session, what they supersede, and the review marker), `forget_field`,
  `forget_memory`, `expire_memory`, `expire_field`, `erase_subject`. Domain rules raise
  `domain.errors.DomainError` subclasses; an unknown subject or one of another tenant raises
  `NotFoundError`; lasting contention raises `ConcurrencyError`; an event store that cannot be
  reached raises `EventStoreUnavailableError` (commands, reads and followers alike).
- Reads: `subject(tenant, subject_id)` loads the aggregate (for checks and tests; hot paths
  read the projections), `tenant_of(subject_id)` reads only the subject's first event (once;
  then a bounded cache), `subject_id_for(tenant, kind, external_ref)` (the reference's first
  subject's id, keyed under the deployment's key: `subject_ids`).
- Every event is also in the application's notification log, read in order by
  `projections.follower.read_events(ledger, after=position)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import structlog
from eventsourcing.persistence import IntegrityError

from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import (
    ApproveChange,
    CommandResult,
    ConfirmChange,
    ProposeChange,
    RecordSession,
    RegisterSubject,
    RejectChange,
    ReviewSession,
)
from factledger.application.ledger.forgetting import ForgettingCommands
from factledger.application.ledger.past_sessions import PastSessions
from factledger.application.ledger.records import proposal_of, session_record
from factledger.application.proposals.forget_requests import plan_requests
from factledger.application.proposals.plan import agreed_changes, plan_changes
from factledger.domain.errors import DomainError, SessionConflictError, SubjectErasedError
from factledger.domain.proposal import Decision, Proposal
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.subject import Subject
from factledger.domain.values import OPEN_SCHEMA, ProfileSchema

log = structlog.get_logger(__name__)


RE_ONBOARD = (
    "subject {subject_id} was erased: its reference names no one until it is registered "
    "again as a returning person (`returning: true`), which creates a new subject with a new "
    "id and an empty ledger, nothing of the erased one readable or linked; issue the agent's "
    "token with the new subject's id"
)
MAX_GENERATIONS = 100  # erasures of one reference a registration walks past, at most


class Ledger(ForgettingCommands, PastSessions):
    """The subject ledger. One instance per process; several processes may share a store."""

    name = "Ledger"  # pinned: it names the PostgreSQL tables and the env prefix
    # Commands reload their subject; the cache (fast-forwarded from the store on every get,
    # so other writers are seen) saves replaying the whole stream each time.
    env = {"AGGREGATE_CACHE_MAXSIZE": "1000"}

    def register_subject(self, cmd: RegisterSubject) -> CommandResult:
        """Registers the reference's subject under an id keyed with the deployment's key (or
        finds it: a retry is a no-op, and a subject registered before keyed ids is found under
        its old id). An erased reference is refused (`SubjectErasedError`) unless the person
        is `returning`: then the next generation's subject is registered (or found, on a
        retry), under the next keyed id, so nobody can derive it from the reference or link
        it to the erased one."""
        subject_id = self.subject_id_for(cmd.tenant, cmd.kind, cmd.external_ref)
        for generation in range(MAX_GENERATIONS + 1):
            if generation > 0:
                subject_id = self.returning_id(cmd.tenant, cmd.kind, cmd.external_ref, generation)
            subject = Subject.register(
                cmd.tenant, cmd.kind, cmd.external_ref, at=self.clock.now(), subject_id=subject_id
            )
            try:
                recordings = self.save(subject)
            except IntegrityError:
                # Already registered (a retry, or a concurrent twin): a no-op, unless the id is
                # taken in another tenant, which the derived id makes impossible.
                existing = self.subject(cmd.tenant, subject.id)
                if not existing.erased:
                    return self._result(existing, position=None)
                if not cmd.returning:
                    raise SubjectErasedError(RE_ONBOARD.format(subject_id=existing.id)) from None
                continue  # the erased generation keeps its receipt: the next one is new
            return self._result(subject, position=recordings[-1].notification.id)
        raise SubjectErasedError(f"reference erased more than {MAX_GENERATIONS} times")

    def returning_id(self, tenant: str, kind: str, external_ref: str, generation: int) -> UUID:
        return self.subject_ids.generation(tenant, kind, external_ref, generation)

    def current_subject_id(self, tenant: str, kind: str, external_ref: str) -> UUID:
        """The id the reference names now: its first subject, or after erasures the latest
        returning one (a read per generation). `NotFoundError` when never registered; an
        erased id when the latest generation is erased."""
        subject_id = self.subject_id_for(tenant, kind, external_ref)
        for generation in range(1, MAX_GENERATIONS + 1):
            if not self.subject(tenant, subject_id).erased:
                return subject_id
            following = self.returning_id(tenant, kind, external_ref, generation)
            try:
                self.subject(tenant, following)
            except NotFoundError:
                return subject_id
            subject_id = following
        return subject_id

    def record_session(self, cmd: RecordSession) -> CommandResult:
        session = session_record(cmd)
        return self._run(
            cmd.tenant, cmd.subject_id, None, lambda s: self.record_session_in(s, session)
        )

    def propose_change(self, cmd: ProposeChange) -> CommandResult:
        proposal = proposal_of(cmd)

        def propose(subject: Subject) -> object:
            schema = self.schemas.get(subject.kind, OPEN_SCHEMA)
            return subject.propose(proposal, schema, at=self._now(), tentative=self.tentative)

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
            self.record_session_in(subject, session)
            return [
                subject.propose(p, schema, at=self._now(), tentative=self.tentative) for p in built
            ]

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
            agreed = agreed_changes(subject, cmd.candidates, cmd.model, cmd.session_id)
            for planned in plan_changes(subject, cmd.candidates, cmd.model, cmd.session_id):
                proposal = planned.proposal
                if not self._proposed(subject, proposal, schema, "proposals.change_refused"):
                    continue
                proposed.append(proposal.change_id)
                for older in planned.supersedes:
                    subject.supersede(older, by=proposal.change_id, at=self._now())
                    superseded.append(older)
            requests = plan_requests(subject, cmd.forget_requests, cmd.model, cmd.session_id)
            proposed.extend(
                request.change_id
                for request in requests
                if self._proposed(subject, request, schema, "proposals.forget_request_refused")
            )
            subject.mark_reviewed(
                cmd.session_id,
                by=cmd.model,
                proposed=proposed,
                superseded=superseded,
                at=self._now(),
                agreed=agreed,
            )
            return proposed

        return self._run(cmd.tenant, cmd.subject_id, None, review)

    def _proposed(
        self, subject: Subject, proposal: Proposal, schema: ProfileSchema, refused: str
    ) -> bool:
        """Proposes one change of the model's session review; a change the subject's rules
        refuse is logged under `refused` and skipped, so the rest of the review still lands."""
        try:
            subject.propose(proposal, schema, at=self._now(), tentative=self.tentative)
        except DomainError as exc:
            log.info(
                refused,
                subject_id=str(subject.id),
                field=proposal.field,
                error_type=type(exc).__name__,
            )
            return False
        return True

    def confirm_change(self, cmd: ConfirmChange) -> CommandResult:
        def confirm(subject: Subject) -> object:
            by = Actor(ActorKind.SUBJECT, str(subject.id))
            decision = Decision(
                by=by, evidence=cmd.evidence, command_id=cmd.command_id, relayed_by=cmd.relayed_by
            )
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
