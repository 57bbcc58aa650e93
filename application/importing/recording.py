"""Handling the lines of one batch: sessions of different subjects side by side, each
subject's lines one after the other, in the file's order.

Nothing here touches the report: each line yields an `Outcome`, which the importer applies in
line order, so a run that stops at a bad line counts nothing past it even when a later line
of another subject was recorded meanwhile (a rerun finds that one unchanged).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

import structlog

from factledger.application.clocks import Clock
from factledger.application.importing.format import (
    MAX_LINE_BYTES,
    ImportLineError,
    ImportRecord,
    SessionLine,
    SubjectLine,
    parse_line,
)
from factledger.application.importing.lines import NumberedLine
from factledger.application.importing.report import ImportReport, LineError
from factledger.application.importing.sessions import PreparedSession, prepare_session
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.past_sessions import PastOutcome
from factledger.application.sessions.field_screening import UnsafeFieldError
from factledger.application.sessions.ports import SafetyFilter
from factledger.application.sessions.times import ConversationTimeError
from factledger.domain.errors import DomainError

log = structlog.get_logger(__name__)
# Errors that condemn one line only; anything else (a store down) ends the import.
LINE_ERRORS = (
    ImportLineError,
    ConversationTimeError,
    UnsafeFieldError,
    DomainError,
)
_KNOWN_SUBJECTS_MAX = 100_000


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one line did (blank lines do nothing)."""

    subjects: int = 0  # registered by this line
    recorded: RecordSession | None = None
    unchanged: int = 0
    error: LineError | None = None

    def apply(self, report: ImportReport, recorded: list[tuple[UUID, str]]) -> None:
        report.subjects += self.subjects
        report.unchanged += self.unchanged
        cmd = self.recorded
        if cmd is None:
            return
        report.sessions += 1
        report.messages += len(cmd.transcript)
        report.withheld += cmd.withheld_count
        report.reviews += bool(cmd.transcript)  # an empty session gets no review
        recorded.append((cmd.subject_id, cmd.session_id))


class LineRecorder:
    """Records the lines of one tenant's import through the ledger."""

    def __init__(self, ledger: Ledger, safety: SafetyFilter, clock: Clock, tenant: str) -> None:
        self._ledger, self._safety, self._clock, self._tenant = ledger, safety, clock, tenant
        self._known: set[UUID] = set()  # subjects registered (or found) in this run

    async def handle(
        self, batch: Sequence[NumberedLine], *, stop_on_error: bool, concurrency: int = 8
    ) -> dict[int, Outcome]:
        """Every line's outcome by line number. With `stop_on_error`, a subject's lines after
        its first bad one are left out (no outcome): the import stops before them."""
        groups: dict[tuple[str, str], list[tuple[NumberedLine, ImportRecord]]] = defaultdict(list)
        outcomes: dict[int, Outcome] = {}
        for line in batch:
            try:
                record = self._parse(line)
            except ImportLineError as exc:
                outcomes[line.number] = _refused(line, exc)
                continue
            if record is None:
                outcomes[line.number] = Outcome()
                continue
            groups[self._subject_of(record)].append((line, record))

        slots = asyncio.Semaphore(max(1, concurrency))

        async def run_group(items: list[tuple[NumberedLine, ImportRecord]]) -> None:
            async with slots:
                await self._handle_group(items, outcomes, stop_on_error=stop_on_error)

        try:
            async with asyncio.TaskGroup() as group:  # one group failing stops the others
                for items in groups.values():
                    group.create_task(run_group(items))
        except BaseExceptionGroup as failed:
            # A store down (503) must reach the caller as itself, not as a group of one.
            raise failed.exceptions[0] from None
        return outcomes

    def _parse(self, line: NumberedLine) -> ImportRecord | None:
        if line.too_long:
            raise ImportLineError(line.number, "line", f"longer than {MAX_LINE_BYTES} bytes")
        return None if line.blank else parse_line(line.number, line.raw)

    def _subject_of(self, record: ImportRecord) -> tuple[str, str]:
        subject = record if isinstance(record, SubjectLine) else record.subject
        return (subject.kind, subject.ref)  # a bad reference is refused when handled

    async def _subject_id(self, kind: str, ref: str) -> UUID:
        """The ledger's id of the reference (keyed under the deployment's key): a read the
        first time this process meets it, so off the event loop then."""
        known = self._ledger.subject_ids.known_first(self._tenant, kind, ref)
        if known is not None:
            return known
        return await asyncio.to_thread(self._ledger.subject_id_for, self._tenant, kind, ref)

    async def _handle_group(
        self,
        items: list[tuple[NumberedLine, ImportRecord]],
        outcomes: dict[int, Outcome],
        *,
        stop_on_error: bool,
    ) -> None:
        """One subject's lines in file order: each run of session lines between subject lines
        and bad lines is recorded in one ledger save."""
        run: list[tuple[NumberedLine, PreparedSession]] = []
        for line, record in items:
            if isinstance(record, SessionLine):
                try:
                    subject_id = await self._subject_id(record.subject.kind, record.subject.ref)
                    prepared = await prepare_session(
                        record,
                        tenant=self._tenant,
                        subject_id=subject_id,
                        safety=self._safety,
                        now=self._clock.now(),
                    )
                except LINE_ERRORS as exc:
                    if not await self._record_run(run, outcomes, stop_on_error=stop_on_error):
                        return
                    run = []
                    outcomes[line.number] = _refused(line, exc)
                    if stop_on_error:
                        return
                    continue
                run.append((line, prepared))
                continue
            if not await self._record_run(run, outcomes, stop_on_error=stop_on_error):
                return
            run = []
            outcomes[line.number] = await self._register_line(line, record)
            if stop_on_error and outcomes[line.number].error is not None:
                return
        await self._record_run(run, outcomes, stop_on_error=stop_on_error)

    async def _register_line(self, line: NumberedLine, record: SubjectLine) -> Outcome:
        try:
            registered, subject_id = await asyncio.to_thread(
                self._register, record.kind, record.ref
            )
        except LINE_ERRORS as exc:
            return _refused(line, exc)
        self._remember(subject_id)
        return Outcome(subjects=registered)

    async def _record_run(
        self,
        run: list[tuple[NumberedLine, PreparedSession]],
        outcomes: dict[int, Outcome],
        *,
        stop_on_error: bool,
    ) -> bool:
        """Records a run of one subject's sessions; False when it stopped at a bad one."""
        if not run:
            return True
        first = run[0][1]
        subject_id = first.command.subject_id
        register = None if subject_id in self._known else (first.kind, first.ref)
        cmds = [prepared.command for _, prepared in run]
        try:
            registered, results = await asyncio.to_thread(
                self._record, cmds, register, stop_on_error
            )
        except LINE_ERRORS as exc:
            # The subject could not be registered: every line of the run fails with it.
            for line, _ in run[:1] if stop_on_error else run:
                outcomes[line.number] = _refused(line, exc)
            return not stop_on_error
        self._remember(subject_id)
        clean = True
        for (line, prepared), result in zip(run, results, strict=True):
            if result is None:  # not tried: an earlier session of the run was refused
                clean = False
            elif isinstance(result, Exception):
                outcomes[line.number] = _refused(line, result)
                clean = False
            else:
                recorded = prepared.command if result else None
                outcomes[line.number] = Outcome(
                    subjects=registered, recorded=recorded, unchanged=int(not result)
                )
                registered = 0
        return clean or not stop_on_error

    def _register(self, kind: str, ref: str) -> tuple[int, UUID]:
        result = self._ledger.register_subject(RegisterSubject(self._tenant, kind, ref))
        return int(result.applied), result.subject_id

    def _record(
        self,
        cmds: list[RecordSession],
        register: tuple[str, str] | None,
        stop_on_error: bool,
    ) -> tuple[int, list[PastOutcome]]:
        registered = 0 if register is None else self._register(*register)[0]
        results = self._ledger.record_past_sessions(cmds, stop_on_error=stop_on_error)
        return registered, results

    def _remember(self, subject_id: UUID) -> None:
        if len(self._known) >= _KNOWN_SUBJECTS_MAX:
            self._known.clear()
        self._known.add(subject_id)


def _refused(line: NumberedLine, exc: Exception) -> Outcome:
    field = _field_of(exc)
    error = LineError(line.number, field, _rule_of(exc, field), type(exc).__name__)
    log.info("import.line_refused", line=line.number, error_type=error.error)
    return Outcome(error=error)


def _field_of(exc: Exception) -> str:
    named = getattr(exc, "field", None)
    if isinstance(named, str):
        return named
    head, sep, _ = str(exc).partition(":")
    return head if sep and " " not in head else "line"


def _rule_of(exc: Exception, field: str) -> str:
    """The rule alone: the report names the field beside it, and an error's message often
    starts with the field already (`messages[0].at: is earlier than ...`)."""
    rule = getattr(exc, "rule", None)
    if isinstance(rule, str):
        return rule
    # Errors of this codebase name ids and rules, never content (STYLE section 6).
    return str(exc).removeprefix(f"{field}: ")
