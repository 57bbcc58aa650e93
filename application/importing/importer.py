"""`HistoryImport`: past conversations from an NDJSON stream into the ledger.

One use case for the CLI and the HTTP API. In the file's order, a batch of lines at a time
(at most `batch_lines` lines or `batch_bytes` bytes held): the batch's subjects side by side,
each subject's lines one after the other, outcomes counted in line order (`recording.py`):

- a `subject` line registers the subject (idempotent); a `session` line registers its subject
  if needed and records the session whole; a subject's run of session lines in one batch
  goes in one save (`Ledger.record_past_sessions`), each session idempotent by
  session id and refused when the subject already has a later session, so the proposals step,
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

import contextlib
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from uuid import UUID

import structlog

from factledger.application.clocks import Clock
from factledger.application.errors import ApplicationError
from factledger.application.importing.lines import NumberedLine
from factledger.application.importing.positions import ImportPosition, ImportPositions
from factledger.application.importing.recording import LineRecorder
from factledger.application.importing.report import ImportReport
from factledger.application.ledger.ledger import Ledger
from factledger.application.sessions.ports import SafetyFilter

log = structlog.get_logger(__name__)
Progress = Callable[[NumberedLine], None]


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
    # A batch of lines is read, then handled: its subjects side by side (at most
    # `concurrency` at once), each subject's lines one after the other, in file order.
    batch_lines: int = 200
    batch_bytes: int = 8 * 1024 * 1024
    concurrency: int = 8


@dataclass(slots=True)
class _Run:
    options: ImportOptions
    report: ImportReport
    saved: ImportPosition | None
    lines: LineRecorder
    last: NumberedLine | None = None  # the last line handled
    since_checkpoint: int = 0
    recorded: list[tuple[UUID, str]] = field(default_factory=list)


class HistoryImport:
    """Imports one stream; `recorded` afterwards lists the (subject, session) pairs it recorded."""

    def __init__(self, ports: ImportPorts) -> None:
        self._ports = ports
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
        batch: list[NumberedLine] = []
        held, options = 0, run.options
        async for line in lines:
            if run.saved is not None and line.number <= run.saved.line:
                self._check_resumed(run, line)
                run.last = line
                if progress is not None:
                    progress(line)
                continue
            batch.append(line)
            held += len(line.raw)
            if len(batch) >= options.batch_lines or held >= options.batch_bytes:
                if not await self._handle(run, batch, progress):
                    return
                batch, held = [], 0
        if batch:
            await self._handle(run, batch, progress)

    async def _begin(self, options: ImportOptions) -> _Run:
        saved = None
        if options.import_id is not None:
            saved = await self._ports.positions.get(options.tenant, options.import_id)
        ports = self._ports
        lines = LineRecorder(ports.ledger, ports.safety, ports.clock, options.tenant)
        if saved is None:
            return _Run(options, ImportReport(import_id=options.import_id), None, lines)
        report = ImportReport.from_json(saved.report)
        report.resumed_after, report.stopped = saved.line, False
        # A stopped import's bad line is handled again: its error is reported again.
        later = [e for e in report.errors if e.line > saved.line]
        report.errors = [e for e in report.errors if e.line <= saved.line]
        report.error_count -= len(later)
        log.info("import.resumed", after_line=saved.line, finished=saved.finished)
        return _Run(options, report, saved, lines)

    def _check_resumed(self, run: _Run, line: NumberedLine) -> None:
        saved = run.saved
        if saved is not None and line.number == saved.line and line.digest != saved.digest:
            raise ImportMismatchError(run.options.import_id or "", saved.line)

    async def _handle(
        self, run: _Run, batch: list[NumberedLine], progress: Progress | None
    ) -> bool:
        """Handles a batch, then applies its outcomes in line order; False when the import
        stops at a bad line (nothing past it is counted, nor the position moved past it)."""
        stop = run.options.on_error is OnError.STOP
        outcomes = await run.lines.handle(
            batch, stop_on_error=stop, concurrency=run.options.concurrency
        )
        for line in batch:
            outcome = outcomes.get(line.number)
            if outcome is None:  # left out after its subject's bad line: stopped already
                return False
            if outcome.error is not None:
                run.report.add_error(outcome.error)
                if stop:
                    run.report.stopped = True
                    return False
            outcome.apply(run.report, run.recorded)
            run.report.lines, run.last = line.number, line
            if progress is not None:
                progress(line)
            run.since_checkpoint += 1
            if run.since_checkpoint >= run.options.checkpoint_lines:
                await self._checkpoint(run)
        return True

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
