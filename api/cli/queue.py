"""`factledger queue`: the review queue from the command line, with the API's filters, cursor
and exact count, or its groups of identical proposals (`--groups`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console

from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.cli.render import queue_entries_table, queue_groups_table
from factledger.api.cli.tenants import checked_tenant
from factledger.api.log_setup import configure_logging
from factledger.api.settings import SettingsError, load_settings
from factledger.application.review_queue.cursor import (
    BadCursorError,
    decode_cursor,
    encode_cursor,
    parse_age,
)
from factledger.application.review_queue.queue import MAX_PAGE, QueueCursor, QueueFilter
from factledger.domain.provenance import Origin

console = Console()
Text = Annotated[str | None, typer.Option()]


def _age(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    try:
        parse_age(value)
    except ValueError:
        raise typer.BadParameter("a number and m, h, d or w (e.g. 7d)", param_hint=name) from None
    return value


def queue(
    tenant: Annotated[str, typer.Argument(help="The tenant whose queue to show.")],
    kind: Annotated[str | None, typer.Option(help="Subject kind.")] = None,
    field: Text = None,
    origin: Annotated[Origin | None, typer.Option(help="stated or inferred.")] = None,
    proposer: Annotated[str | None, typer.Option(help="kind:id, e.g. model:extractor-v1.")] = None,
    conversation_type: Text = None,
    q: Annotated[
        str | None, typer.Option(help="Part of a field name or subject reference.")
    ] = None,
    older_than: Annotated[str | None, typer.Option(help="Recorded longer ago: 7d, 12h.")] = None,
    newer_than: Annotated[str | None, typer.Option(help="Recorded more recently: 30m.")] = None,
    group: Annotated[str | None, typer.Option(help="One group of identical proposals.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=MAX_PAGE)] = 50,
    cursor: Annotated[str | None, typer.Option(help="From a previous page's output.")] = None,
    groups: Annotated[bool, typer.Option("--groups", help="Show the groups instead.")] = False,
) -> None:
    """Show a page of the tenant's pending proposals (every filter narrows all of them, and the
    count is exact), or its groups of identical proposals."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None
    configure_logging(json_lines=settings.log_json, level="WARNING")
    checked_tenant(settings.auth, tenant, param="TENANT")
    try:
        at = QueueCursor() if cursor is None else decode_cursor(cursor)
    except BadCursorError:
        raise typer.BadParameter("not a cursor this queue gave", param_hint="--cursor") from None
    now = datetime.now(UTC)
    older, newer = _age(older_than, "--older-than"), _age(newer_than, "--newer-than")
    where = QueueFilter(
        kind=kind,
        field=field,
        origin=origin,
        proposer=proposer,
        conversation_type=conversation_type,
        text=q,
        proposed_before=None if older is None else now - parse_age(older),
        proposed_after=None if newer is None else now - parse_age(newer),
        group=group,
    )
    with open_ledger_runtime(settings) as rt:
        if rt.queue is None:
            raise typer.BadParameter("this deployment has no review queue")
        if groups:
            found = rt.queue.groups(tenant, where, offset=0, limit=limit)
            console.print(queue_groups_table(found.groups, found.total))
            return
        page = rt.queue.page(tenant, where, at, limit)
    console.print(queue_entries_table(page.entries, page.total))
    if page.next_cursor is not None:
        console.print(f"next page: --cursor {encode_cursor(page.next_cursor)}")
    if page.previous_cursor is not None:
        console.print(f"previous page: --cursor {encode_cursor(page.previous_cursor)}")


def register(app: typer.Typer) -> None:
    app.command()(queue)
