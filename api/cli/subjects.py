"""`factledger subjects erase | expire-memory | expire-field`: subject administration for
operators."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Annotated
from uuid import UUID

import typer

from factledger.api.bootstrap.compose import open_ledger_runtime, open_runtime
from factledger.api.bootstrap.runtime import Needs
from factledger.api.cli.ledger import NamedSubject, subject_ref
from factledger.api.settings import Settings, SettingsError, load_settings
from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import (
    CommandResult,
    EraseSubject,
    ExpireField,
    ExpireMemory,
)
from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import DomainError
from factledger.domain.provenance import Actor, ActorKind

subjects_app = typer.Typer(help="Subject administration.", no_args_is_help=True)
# The ledger and the saved responses; the backend's copy is dropped by the sync worker.
ERASURE = Needs(backend=False, sessions=True, idempotency=True, run_sync=False)


@subjects_app.command("erase")
def erase(
    subject: Annotated[str, typer.Argument(help="tenant/kind/reference, or a subject id.")],
    reason: Annotated[
        str, typer.Option(help="Why (kept in clear in the receipt: no content, e.g. a ticket).")
    ],
    by: Annotated[str, typer.Option(help="Who asks: the operator's staff id.")],
    tenant: Annotated[str | None, typer.Option(help="Tenant, when SUBJECT is an id.")] = None,
) -> None:
    """Erase a subject: its keys are deleted (every transcript and field becomes unreadable),
    its views and saved responses go, and the sync drops its memory-backend namespace. The
    ledger keeps a receipt: who, when, why."""
    settings = _settings()
    named = subject_ref(subject, tenant, settings.auth)
    try:
        subject_id, applied = asyncio.run(
            _erase(settings, named, Actor(ActorKind.STAFF, by), reason)
        )
    except (NotFoundError, DomainError) as exc:
        typer.echo(f"{type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"subject {subject_id} erased" if applied else f"subject {subject_id}: no change")


async def _erase(
    settings: Settings, named: NamedSubject, by: Actor, reason: str
) -> tuple[UUID, bool]:
    async with open_runtime(settings, ERASURE) as rt:
        subject_id = await asyncio.to_thread(named.id_in, rt.ledger)
        cmd = EraseSubject(named.tenant, subject_id, by, reason)
        result = await asyncio.to_thread(rt.ledger.erase_subject, cmd)
        if rt.idempotency is not None:
            await rt.idempotency.forget_subject(cmd.tenant, cmd.subject_id)
        if rt.session_buffer is not None:  # its open sessions' messages go too
            await rt.session_buffer.discard_subject(cmd.subject_id)
        rt.catch_up()
        return subject_id, result.applied


@subjects_app.command("expire-memory")
def expire_memory(
    subject: Annotated[str, typer.Argument(help="tenant/kind/reference, or a subject id.")],
    memory_id: Annotated[str, typer.Argument(help="The backend memory's id.")],
    until: Annotated[datetime, typer.Option(help="Not served from this time on (ISO 8601).")],
    by: Annotated[str, typer.Option(help="Who asks: the operator's staff id.")],
    tenant: Annotated[str | None, typer.Option(help="Tenant, when SUBJECT is an id.")] = None,
) -> None:
    """Stop serving a memory from a given time on; the sync worker sets it in the backend."""
    settings = _settings()
    named = subject_ref(subject, tenant, settings.auth)
    valid_until = _aware(until)
    actor = Actor(ActorKind.STAFF, by)

    def expire(ledger: Ledger) -> CommandResult:
        subject_id = named.id_in(ledger)
        cmd = ExpireMemory(named.tenant, subject_id, memory_id, valid_until, actor)
        return ledger.expire_memory(cmd)

    _record_expiry(settings, memory_id, valid_until, expire)


@subjects_app.command("expire-field")
def expire_field(
    subject: Annotated[str, typer.Argument(help="tenant/kind/reference, or a subject id.")],
    field: Annotated[str, typer.Argument(help="A field of the current profile.")],
    until: Annotated[datetime, typer.Option(help="Not served from this time on (ISO 8601).")],
    by: Annotated[str, typer.Option(help="Who asks: the operator's staff id.")],
    reason: Annotated[
        str | None, typer.Option(help="Why (kept in clear: no content, e.g. a ticket).")
    ] = None,
    tenant: Annotated[str | None, typer.Option(help="Tenant, when SUBJECT is an id.")] = None,
) -> None:
    """Stop serving a profile field from a given time on; it stays in the profile and its
    history, and a later confirmed change of the field clears the expiry."""
    settings = _settings()
    named = subject_ref(subject, tenant, settings.auth)
    valid_until = _aware(until)
    actor = Actor(ActorKind.STAFF, by)

    def expire(ledger: Ledger) -> CommandResult:
        cmd = ExpireField(named.tenant, named.id_in(ledger), field, valid_until, actor, reason)
        return ledger.expire_field(cmd)

    _record_expiry(settings, field, valid_until, expire)


def _settings() -> Settings:
    try:
        return load_settings()
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None


def _record_expiry(
    settings: Settings,
    target: str,
    valid_until: datetime,
    expire: Callable[[Ledger], CommandResult],
) -> None:
    """Expiries need only the ledger: the sync worker carries them to the backend later."""
    try:
        with open_ledger_runtime(settings, catch_up=False) as rt:
            result = expire(rt.ledger)
    except (NotFoundError, DomainError) as exc:
        typer.echo(f"{type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(1) from None
    state = "recorded" if result.applied else "already recorded"
    typer.echo(f"expiry of {target} at {valid_until.isoformat()} {state}")


def _aware(until: datetime) -> datetime:
    """A time typed without a zone is the operator's local time."""
    return until if until.tzinfo else until.astimezone()


def register(app: typer.Typer) -> None:
    app.add_typer(subjects_app, name="subjects")
