"""`factledger import PATH`: past conversations from an NDJSON file (or a mem0 / LoCoMo export)
into the configured ledger, with a progress bar and a final report."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import IMPORT
from factledger.api.cli.tenants import checked_tenant
from factledger.api.log_setup import configure_logging
from factledger.api.settings import Settings, load_settings
from factledger.application.importing.converters import ConversionError, from_locomo, from_mem0
from factledger.application.importing.follow_up import count_proposals, drain_sync, ledger_head
from factledger.application.importing.format import to_line
from factledger.application.importing.importer import (
    HistoryImport,
    ImportMismatchError,
    ImportOptions,
    ImportPorts,
    OnError,
)
from factledger.application.importing.lines import NumberedLine, split_lines
from factledger.application.importing.report import ImportReport
from factledger.application.sync.ports import SyncStore
from factledger.application.sync.worker import SyncWorker

CHUNK = 1 << 20
err = Console(stderr=True)


class Source(StrEnum):
    NDJSON = "ndjson"
    MEM0 = "mem0"
    LOCOMO = "locomo"


def converted(path: Path, source: Source, kind: str) -> bytes:
    """The import-format bytes of a mem0 or LoCoMo export (these are single JSON documents)."""
    data = json.loads(path.read_bytes())
    records = from_mem0(data, kind=kind) if source is Source.MEM0 else from_locomo(data, kind=kind)
    return "".join(f"{to_line(r)}\n" for r in records).encode()


def _chunks(path: Path | None, data: bytes | None) -> Iterator[bytes]:
    if data is not None:
        yield from (data[i : i + CHUNK] for i in range(0, len(data), CHUNK))
        return
    assert path is not None  # noqa: S101 - one of the two is given
    with path.open("rb") as file:
        while chunk := file.read(CHUNK):
            yield chunk


def content_id(path: Path | None, data: bytes | None) -> str:
    """The import id by default: the sha256 of what is imported."""
    digest = hashlib.sha256()
    for chunk in _chunks(path, data):
        digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


async def _lines(path: Path | None, data: bytes | None) -> AsyncIterator[NumberedLine]:
    chunks = _chunks(path, data)
    pending = split_lines(chunks)
    while True:
        # Reading the file blocks: each line is fetched off the event loop.
        line = await asyncio.to_thread(next, pending, None)
        if line is None:
            return
        yield line


async def run_import(
    settings: Settings,
    options: ImportOptions,
    source: tuple[Path | None, bytes | None],
    *,
    wait_sync_s: float | None,
    progress: Progress | None = None,
) -> ImportReport:
    """The import on the configured stores; with `wait_sync_s`, runs the sync (and the
    proposals step) until the queue is empty or that long has passed."""
    # Without waiting, no backend is opened: the sync of the API or the workers ships it.
    needs = IMPORT if wait_sync_s is not None else replace(IMPORT, backend=False)
    path, data = source
    size = len(data) if data is not None else path.stat().st_size if path is not None else 0
    async with open_runtime(settings, needs) as runtime:
        if runtime.imports is None:
            raise RuntimeError("the runtime has no import position store")
        ledger = runtime.ledger
        head = await asyncio.to_thread(ledger_head, ledger)
        use_case = HistoryImport(ImportPorts(ledger, runtime.safety, runtime.imports, ledger.clock))
        task = progress.add_task("import", total=size) if progress is not None else None

        def advance(line: NumberedLine) -> None:
            if progress is not None and task is not None:
                progress.update(task, completed=line.offset)

        report = await use_case.run(_lines(path, data), options, advance)
        worker, store = runtime.sync_worker, runtime.sync_store
        if await _drained(worker, store, wait_sync_s):
            report.proposals = await asyncio.to_thread(
                count_proposals, ledger, after=head, sessions=use_case.recorded
            )
        await asyncio.to_thread(runtime.catch_up)
        return report


async def _drained(worker: SyncWorker | None, store: SyncStore | None, s: float | None) -> bool:
    """Runs the sync until its queue is empty (False: not asked to, or it took too long)."""
    if worker is None or store is None or s is None:
        return False
    return await drain_sync(worker, store, timeout_s=s)


def print_report(report: ImportReport) -> None:
    resumed = f" (resumed after line {report.resumed_after})" if report.resumed_after else ""
    state = "finished" if report.finished else "stopped at a bad line"
    typer.echo(f"import {report.import_id or '-'}: {state}, {report.lines} lines{resumed}")
    if report.finished and report.resumed_after == report.lines:
        typer.echo("  imported before: nothing new was recorded; the import's report:")
    typer.echo(f"  subjects registered   {report.subjects}")
    typer.echo(f"  sessions recorded     {report.sessions} ({report.unchanged} already recorded)")
    typer.echo(f"  messages recorded     {report.messages} ({report.withheld} withheld)")
    proposed = "not waited for" if report.proposals is None else str(report.proposals)
    typer.echo(f"  sessions reviewed     {report.reviews}; changes proposed: {proposed}")
    typer.echo(f"  errors                {report.error_count}")
    for error in report.errors:
        typer.echo(f"    line {error.line}: {error.field}: {error.rule} ({error.error})")


def import_command(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="The file to import.")],
    tenant: Annotated[str, typer.Option(help="The tenant the subjects belong to.")],
    source: Annotated[
        Source, typer.Option("--from", help="The file's format: ndjson, or an export to convert.")
    ] = Source.NDJSON,
    kind: Annotated[str, typer.Option(help="Subject kind of converted exports.")] = "person",
    import_id: Annotated[
        str | None, typer.Option(help="Names the import (default: the content's sha256).")
    ] = None,
    on_error: Annotated[OnError, typer.Option(help="skip a bad line, or stop there.")] = (
        OnError.SKIP
    ),
    out: Annotated[
        Path | None, typer.Option(help="With --from: write the converted NDJSON here and stop.")
    ] = None,
    wait_sync: Annotated[
        bool, typer.Option(help="Run the sync and the proposals step before reporting.")
    ] = True,
    sync_timeout_s: Annotated[float, typer.Option(help="How long to wait for the sync.")] = 600.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Import past conversations with their original times: subjects, sessions, messages,
    summaries (docs/import-format.md). Idempotent and resumable: run it again after a crash."""
    settings = load_settings()
    checked_tenant(settings.auth, tenant)
    try:
        data = None if source is Source.NDJSON else converted(path, source, kind)
    except ConversionError as exc:
        # The converters name a path and a fixed rule, never a value from the file.
        raise typer.BadParameter(str(exc), param_hint="PATH") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise typer.BadParameter("not a JSON document", param_hint="PATH") from None
    if out is not None:
        if data is None:
            raise typer.BadParameter("--out needs --from mem0 or --from locomo")
        out.write_bytes(data)
        lines = data.count(b"\n")
        typer.echo(f"wrote {lines} lines to {out}")
        return
    file = path if data is None else None
    options = ImportOptions(tenant, import_id or content_id(file, data), on_error)
    configure_logging(json_lines=settings.log_json, level="WARNING")
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
    )
    try:
        with Progress(*columns, console=err, transient=True) as progress:
            report = asyncio.run(
                run_import(
                    settings,
                    options,
                    (file, data),
                    wait_sync_s=sync_timeout_s if wait_sync else None,
                    progress=progress,
                )
            )
    except ImportMismatchError as exc:
        err.print(f"{exc}: give this file another --import-id")
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(report.to_json()))
    else:
        print_report(report)
    if report.stopped:
        raise typer.Exit(1)
    if report.error_count:
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.command("import")(import_command)
