"""`HistoryImport`: past conversations from an NDJSON stream into the ledger (ADR 0021).

One use case for the CLI and the HTTP API. Line by line, in the file's order:

- a `subject` line registers the subject (idempotent); a `session` line registers its subject
  if needed and records the session whole, with `Ledger.record_past_session` (idempotent by
  session id; refused when the subject already has a later session, so the proposals step,
  which the sync queue runs per subject in recording order, sees a subject's past in time
  order);
- a bad line (`ImportLineError`, a time, a refused summary, a broken ledger rule) is reported
  with its number and field; `on_error=skip` goes on, `stop` ends the import before it;
- every `checkpoint_lines` lines, at the end, and when the run fails (if the store still
  answers), the position is saved (`ImportPositions`).
  A resumed import skips the lines up to it once their digest matches, so it never records
  a line twice; a finished import given again records nothing and answers with its report
  (lines appended since are imported, as a resumed import's would be).

A store that fails (`StoreUnavailableError`) ends the import with that error: nothing is half
recorded, and running it again resumes. Logs carry line numbers, counts and error types.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from uuid import UUID

import structlog

from factledger.application.errors import ApplicationError, SessionOrderError
from factledger.application.importing.format import (
    MAX_LINE_BYTES,
    ImportLineError,
    SessionLine,
    SubjectLine,
    parse_line,
)
from factledger.application.importing.lines import NumberedLine
from factledger.application.importing.positions import ImportPosition, ImportPositions
from factledger.application.importing.report import ImportReport, LineError
from factledger.application.importing.sessions import PreparedSession, prepare_session
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.ports import Clock, SafetyFilter
from factledger.application.sessions.side_doors import UnsafeFieldError
from factledger.application.sessions.times import ConversationTimeError
from factledger.domain.errors import DomainError

log = structlog.get_logger(__name__)
Progress = Callable[[NumberedLine], None]
# Errors that condemn one line only; anything else (a store down) ends the import.
LINE_ERRORS = (ImportLineError, ConversationTimeError, UnsafeFieldError, SessionOrderError)
_KNOWN_SUBJECTS_MAX = 100_000


class OnError(StrEnum):
    SKIP = "skip"
    STOP = "stop"


class ImportMismatchError(ApplicationError):
    """The lines an import id already covers differ from the ones given now (HTTP 409)."""

    field = "import_id"

    def __init__(self, import_id: str, line: int) -> None:
        super().__init__(f"import {import_id}: lines 1..{line} differ from the ones imported")


@dataclass(frozen=True, slots=True)
class ImportPorts:
    ledger: Ledger
    safety: SafetyFilter
    positions: ImportPositions
    clock: Clock


@dataclass(frozen=True, slots=True)
class ImportOptions:
    tenant: str
    import_id: str | None  # None: no position is kept (a rerun re-checks every line)
    on_error: OnError = OnError.SKIP
    checkpoint_lines: int = 100


@dataclass(slots=True)
class _Run:
    options: ImportOptions
    report: ImportReport
    saved: ImportPosition | None
    last: NumberedLine | None = None  # the last line handled
    since_checkpoint: int = 0
    recorded: list[tuple[UUID, str]] = field(default_factory=list)


class HistoryImport:
    """Imports one stream; `recorded` afterwards lists the (subject, session) pairs it recorded."""

    def __init__(self, ports: ImportPorts) -> None:
        self._ports = ports
        self._known: set[UUID] = set()
        self.recorded: list[tuple[UUID, str]] = []

    async def run(
        self,
        lines: AsyncIterable[NumberedLine],
        options: ImportOptions,
        progress: Progress | None = None,
    ) -> ImportReport:
        run = await self._begin(options)
        try:
            await self._read(run, lines, progress)
        except BaseException:
            # A store down, a client gone: save how far this run got, if the store still
            # answers, so the next run need not handle those lines again.
            with contextlib.suppress(Exception):
                await self._checkpoint(run)
            raise
        finally:
            self.recorded = run.recorded
        if run.saved is not None and (run.last is None or run.last.number < run.saved.line):
            raise ImportMismatchError(options.import_id or "", run.saved.line)
        run.report.finished = not run.report.stopped
        await self._checkpoint(run)
        log.info(
            "import.finished",
            lines=run.report.lines,
            sessions=run.report.sessions,
            unchanged=run.report.unchanged,
            errors=run.report.error_count,
            stopped=run.report.stopped,
        )
        return run.report

    async def _read(
        self, run: _Run, lines: AsyncIterable[NumberedLine], progress: Progress | None
    ) -> None:
        async for line in lines:
            if run.saved is not None and line.number <= run.saved.line:
                self._check_resumed(run, line)
            elif not await self._handle(run, line):
                return
            run.last = line
            if progress is not None:
                progress(line)

    async def _begin(self, options: ImportOptions) -> _Run:
        saved = None
        if options.import_id is not None:
            saved = await self._ports.positions.get(options.tenant, options.import_id)
        if saved is None:
            return _Run(options, ImportReport(import_id=options.import_id), None)
        report = ImportReport.from_json(saved.report)
        report.resumed_after, report.stopped = saved.line, False
        # A stopped import's bad line is handled again: its error is reported again.
        later = [e for e in report.errors if e.line > saved.line]
        report.errors = [e for e in report.errors if e.line <= saved.line]
        report.error_count -= len(later)
        log.info("import.resumed", after_line=saved.line, finished=saved.finished)
        return _Run(options, report, saved)

    def _check_resumed(self, run: _Run, line: NumberedLine) -> None:
        saved = run.saved
        if saved is not None and line.number == saved.line and line.digest != saved.digest:
            raise ImportMismatchError(run.options.import_id or "", saved.line)

    async def _handle(self, run: _Run, line: NumberedLine) -> bool:
        """Handles one new line; False when the import stops before it."""
        try:
            if not line.blank:
                await self._import(run, line)
        except (*LINE_ERRORS, DomainError) as exc:
            error = LineError(line.number, _field_of(exc), _rule_of(exc), type(exc).__name__)
            log.info("import.line_refused", line=line.number, error_type=error.error)
            if run.options.on_error is OnError.STOP:
                run.report.add_error(error)
                run.report.stopped = True
                return False
            run.report.add_error(error)
        run.report.lines = line.number
        run.since_checkpoint += 1
        if run.since_checkpoint >= run.options.checkpoint_lines:
            run.last = line
            await self._checkpoint(run)
        return True

    async def _import(self, run: _Run, line: NumberedLine) -> None:
        if line.too_long:
            raise ImportLineError(line.number, "line", f"longer than {MAX_LINE_BYTES} bytes")
        record = parse_line(line.number, line.raw)
        tenant = run.options.tenant
        if isinstance(record, SubjectLine):
            await asyncio.to_thread(self._register, run, tenant, record.kind, record.ref)
            return
        assert isinstance(record, SessionLine)  # noqa: S101 - the union has two members
        now = self._ports.clock.now()
        prepared = await prepare_session(record, tenant=tenant, safety=self._ports.safety, now=now)
        await asyncio.to_thread(self._record, run, prepared)

    def _register(self, run: _Run, tenant: str, kind: str, ref: str) -> UUID:
        result = self._ports.ledger.register_subject(RegisterSubject(tenant, kind, ref))
        run.report.subjects += result.applied
        if len(self._known) >= _KNOWN_SUBJECTS_MAX:
            self._known.clear()
        self._known.add(result.subject_id)
        return result.subject_id

    def _record(self, run: _Run, prepared: PreparedSession) -> None:
        cmd = prepared.command
        if cmd.subject_id not in self._known:
            self._register(run, cmd.tenant, prepared.kind, prepared.ref)
        result = self._ports.ledger.record_past_session(cmd)
        report = run.report
        if not result.applied:
            report.unchanged += 1
            return
        report.sessions += 1
        report.messages += len(cmd.transcript)
        report.withheld += cmd.withheld_count
        report.reviews += bool(cmd.transcript)
        run.recorded.append((cmd.subject_id, cmd.session_id))

    async def _checkpoint(self, run: _Run) -> None:
        run.since_checkpoint = 0
        import_id, last = run.options.import_id, run.last
        if import_id is None or last is None:
            return
        # Stopped, `last` is the line before the bad one: a rerun starts at the bad line.
        position = ImportPosition(
            last.number, last.digest, run.report.to_json(), run.report.finished
        )
        await self._ports.positions.save(run.options.tenant, import_id, position)


def _field_of(exc: Exception) -> str:
    named = getattr(exc, "field", None)
    if isinstance(named, str):
        return named
    text = str(exc)
    head, sep, _ = text.partition(":")
    return head if sep and " " not in head else "line"


def _rule_of(exc: Exception) -> str:
    if isinstance(exc, ImportLineError):
        return exc.rule
    # Errors of this codebase name ids and rules, never content (STYLE section 6).
    return str(exc)
