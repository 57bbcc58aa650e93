"""`PastSessions`: imported sessions, one or a run at a time.

A session may start before sessions its subject already has (a session an earlier import
skipped, given again in a corrected file): the ledger keeps the order of recording, the
conversation's clock orders what was said, and the proposals step weighs each statement by
when it was said (`proposals.plan`), so an old statement never overtakes a newer one.

`record_past_sessions` records several sessions of one subject with one load and one save:
the import's sessions of a subject in one batch of lines cost one round of the
write path instead of one each. Each session still gets its own outcome, as if recorded
alone: a session that breaks a rule records nothing of its own and leaves the others as
they are (with `stop_on_error`, the sessions after it are not tried). A rule broken after
the session's event was already triggered (a message deciding on a change the subject may
not decide) would leave that event in the save; such a run is recorded again one session
at a time instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from eventsourcing.persistence import IntegrityError

from factledger.application.errors import ConcurrencyError
from factledger.application.ledger.commands import CommandResult, RecordSession
from factledger.application.ledger.core import MAX_ATTEMPTS, LedgerCore, back_off, log
from factledger.application.ledger.records import session_record
from factledger.domain.errors import DomainError
from factledger.domain.subject import Subject

# Per session: applied (True), found recorded already (False), refused (its error), or not
# tried because an earlier one was refused under `stop_on_error` (None).
PastOutcome = bool | DomainError | None


class _Tangled(Exception):  # noqa: N818 - internal signal, never raised to callers
    """A session broke a rule after its event was triggered: record the run one by one."""


class PastSessions(LedgerCore):
    """The ledger's import commands."""

    def record_past_session(self, cmd: RecordSession) -> CommandResult:
        """Records an imported session: a no-op when it is recorded already with the same
        content, wherever it falls in time among the subject's sessions."""
        return self._run(
            cmd.tenant, cmd.subject_id, None, lambda subject: self._record_past(subject, cmd)
        )

    def record_past_sessions(
        self, cmds: Sequence[RecordSession], *, stop_on_error: bool = False
    ) -> list[PastOutcome]:
        """Records sessions of one subject, in order, in one save; each one's outcome."""
        if not cmds:
            return []
        first = cmds[0]
        if any(c.subject_id != first.subject_id or c.tenant != first.tenant for c in cmds):
            raise ValueError("record_past_sessions: one subject per call")
        for attempt in range(MAX_ATTEMPTS):
            subject = self.subject(first.tenant, first.subject_id)
            try:
                outcomes = self._record_run(subject, cmds, stop_on_error=stop_on_error)
            except _Tangled:
                return self._one_by_one(cmds, stop_on_error=stop_on_error)
            if not subject.pending_events:
                return outcomes
            try:
                self.save(subject)
            except IntegrityError:
                log.info("ledger.write_conflicted", subject_id=str(subject.id), attempt=attempt)
                back_off(attempt)
                continue
            log.info("ledger.sessions_saved", subject_id=str(subject.id), sessions=len(cmds))
            return outcomes
        raise ConcurrencyError(f"subject {first.subject_id}: gave up after {MAX_ATTEMPTS}")

    def _record_run(
        self, subject: Subject, cmds: Sequence[RecordSession], *, stop_on_error: bool
    ) -> list[PastOutcome]:
        outcomes: list[PastOutcome] = []
        refused = False
        for cmd in cmds:
            if refused and stop_on_error:
                outcomes.append(None)
                continue
            before = len(subject.pending_events)
            try:
                outcomes.append(bool(self._record_past(subject, cmd)))
            except DomainError as exc:
                if len(subject.pending_events) != before:
                    raise _Tangled from exc
                outcomes.append(exc)
                refused = True
        return outcomes

    def _one_by_one(
        self, cmds: Sequence[RecordSession], *, stop_on_error: bool
    ) -> list[PastOutcome]:
        outcomes: list[PastOutcome] = []
        for cmd in cmds:
            if stop_on_error and any(isinstance(o, Exception) for o in outcomes):
                outcomes.append(None)
                continue
            try:
                outcomes.append(self.record_past_session(cmd).applied)
            except DomainError as exc:
                outcomes.append(exc)
        return outcomes

    def _record_past(self, subject: Subject, cmd: RecordSession) -> bool:
        return self.record_session_in(subject, session_record(cmd))
