"""`factledger demo | history | replay | projections rebuild`: the ledger from the command line."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from contextlib import AbstractContextManager, AsyncExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated
from uuid import UUID

import typer
from rich.console import Console

from factledger.api.bootstrap.compose import open_ledger_runtime, open_runtime
from factledger.api.bootstrap.runtime import DEMO, Runtime
from factledger.api.cli.render import (
    dated_diff_table,
    diff_table,
    history_table,
    profile_table,
    queue_table,
    sessions_table,
    versions_table,
)
from factledger.api.cli.tenants import checked_tenant
from factledger.api.settings import (
    AuthSettings,
    InMemoryBackendSettings,
    InMemorySyncStoreSettings,
    InMemoryViewSettings,
    Settings,
    SettingsError,
    SqliteEventStoreSettings,
    SyncSettings,
    load_settings,
)
from factledger.application.errors import NotFoundError
from factledger.application.ledger.event_views import INTERNAL_FIELDS
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.queries import DEFAULT_CLOCK, Clock
from factledger.application.review_queue.queue import QueueCursor, QueueFilter
from factledger.domain.errors import DomainError
from factledger.projections.follower import read_events

DEMO_QUEUE_SHOWN = 50  # the demo has a handful of proposals: all of them

projections_app = typer.Typer(help="Projection maintenance.", no_args_is_help=True)
console = Console()


def demo(
    data_dir: Annotated[
        Path | None, typer.Option(help="Where to keep the demo's ledger (default: a new temp dir).")
    ] = None,
) -> None:
    """Run the product's story on the embedded default: SQLite ledger, short-term memory, the
    sync worker, the in-memory backend (default embedder and extractor), the product's
    proposer on the default extractor, and recall."""
    target = data_dir or Path(tempfile.mkdtemp(prefix="factledger-demo-"))
    settings = load_settings(
        data_dir=target,
        event_store=SqliteEventStoreSettings(),
        views=InMemoryViewSettings(),
        backend=InMemoryBackendSettings(),
        sync=SyncSettings(store=InMemorySyncStoreSettings()),
    )
    asyncio.run(_play_demo(settings, target))


async def _play_demo(settings: Settings, target: Path) -> None:
    # The story is the testing layer's scripted conversation: imported by the demo alone, so
    # the serving commands never load it.
    from factledger.api.cli.demo.agent import AgentDemo
    from factledger.api.cli.demo.model import configured_model
    from factledger.testing.manual_clock import ManualClock
    from factledger.testing.story.script import INFERENCE, JAN, KIND, REASON, REF, TENANT
    from factledger.testing.story.steps import play_story

    clock = ManualClock(JAN)
    async with open_runtime(settings, DEMO, clock=clock) as rt, AsyncExitStack() as stack:
        console.rule("[bold]factledger demo: one lead, six months")
        agent = AgentDemo(rt, console.print)
        model = await configured_model(settings, rt, stack)

        def say(line: str) -> None:
            rt.catch_up()
            console.print(f"  [green]>[/green] {line}")

        ids = await play_story(
            rt.ledger, clock, say, record=agent.record, checkpoint=agent.checkpoint, model=model
        )
        rt.catch_up()
        sid, reader = ids.subject_id, rt.profiles
        console.print(profile_table(reader.current(TENANT, sid), "Current profile"))
        console.print(versions_table(reader.versions(TENANT, sid)))
        console.print(history_table(reader.history(TENANT, sid, "supplier"), "Supplier history"))
        console.print(history_table(reader.history(TENANT, sid, REASON.field), "Forgotten field"))
        console.print(diff_table(reader.diff(TENANT, sid, 1, 3), 1, 3))
        if rt.queue is not None:
            pending = rt.queue.page(TENANT, QueueFilter(), QueueCursor(), DEMO_QUEUE_SHOWN)
            console.print(queue_table([entry.change for entry in pending.entries]))
        console.print(sessions_table(reader.sessions(TENANT, sid)))
        console.print(
            f"The rejected inference ({INFERENCE.field}) appears in no version. Explore with:\n"
            f"  FACTLEDGER_DATA_DIR={target} factledger history {TENANT}/{KIND}/{REF} "
            "--as-of 2026-02-01"
        )


@dataclass(frozen=True, slots=True)
class NamedSubject:
    """A subject as the operator named it: by id, or by kind and reference, whose id only the
    ledger can derive (it is keyed under the deployment's key)."""

    tenant: str
    subject_id: UUID | None = None
    kind: str = ""
    ref: str = ""

    def id_in(self, ledger: Ledger) -> UUID:
        if self.subject_id is not None:
            return self.subject_id
        try:
            return ledger.subject_id_for(self.tenant, self.kind, self.ref)
        except DomainError as exc:
            raise typer.BadParameter(f"SUBJECT: {exc}") from None


def subject_ref(subject: str, tenant: str | None, auth: AuthSettings) -> NamedSubject:
    """The subject `tenant/kind/reference` names (its first subject), or an id given with
    `--tenant`; the tenant must be one the deployment serves."""
    parts = subject.split("/")
    if len(parts) == 3:
        checked_tenant(auth, parts[0], param="SUBJECT")
        return NamedSubject(parts[0], kind=parts[1], ref=parts[2])
    if tenant is None:
        raise typer.BadParameter("give tenant/kind/reference, or a subject id with --tenant")
    checked_tenant(auth, tenant)
    try:
        return NamedSubject(tenant, UUID(subject))
    except ValueError:
        raise typer.BadParameter("not a subject id") from None


def history(
    subject: Annotated[str, typer.Argument(help="tenant/kind/reference, or a subject id.")],
    as_of: Annotated[
        datetime | None, typer.Option("--as-of", help="Show the profile at this time.")
    ] = None,
    tenant: Annotated[str | None, typer.Option(help="Tenant, when SUBJECT is an id.")] = None,
    field: Annotated[str | None, typer.Option(help="Only this field's history.")] = None,
    clock: Annotated[
        Clock,
        typer.Option(
            help="The clock --as-of and --diff-from are read on: said (when the subject said "
            "it, by all known now) or known (the version the ledger had written by then)."
        ),
    ] = DEFAULT_CLOCK,
    diff_from: Annotated[
        datetime | None,
        typer.Option("--diff-from", help="Also show what changed from this time to --as-of."),
    ] = None,
) -> None:
    """Show a subject's profile (now or as of a date, on either clock), the history of its
    fields, and what changed between two dates."""
    settings = _settings()
    named = subject_ref(subject, tenant, settings.auth)
    tenant_name = named.tenant
    with open_ledger_runtime(settings) as rt:
        sid = named.id_in(rt.ledger)
        reader = rt.profiles
        try:
            if as_of is None:
                profile = reader.current(tenant_name, sid)
            else:
                profile = reader.as_of(tenant_name, sid, _aware(as_of), clock)
            entries = reader.history(tenant_name, sid, field)
            if diff_from is not None:
                since = _aware(diff_from)
                until = rt.ledger.clock.now() if as_of is None else _aware(as_of)
                diffs = reader.diff_at(tenant_name, sid, since, until, clock)
        except NotFoundError as exc:
            console.print(f"[red]not found:[/red] {exc}")
            raise typer.Exit(1) from None
        title = f"Profile as of ({clock.value} clock)" if as_of else "Current profile"
        console.print(profile_table(profile, title))
        console.print(history_table(entries, "Field history"))
        if diff_from is not None:
            title = f"Changed since {since:%Y-%m-%d} ({clock.value} clock)"
            console.print(dated_diff_table(diffs, title, f"{since:%Y-%m-%d}", f"{until:%Y-%m-%d}"))


def _aware(at: datetime) -> datetime:
    """A date without a timezone is read in the machine's."""
    return at if at.tzinfo else at.astimezone()


def _json_default(value: object) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def replay(
    after: Annotated[int, typer.Option(min=0, help="Start after this position.")] = 0,
) -> None:
    """Print every event in log order as JSON lines (for analysts)."""
    with _runtime(catch_up=False) as rt:
        position = after
        while batch := read_events(rt.ledger, after=position):
            for item in batch:
                event = item.event
                # What leaves the service, as the stream sends it: no fingerprint (forgotten
                # lines read back as forgotten: their keys are gone).
                payload = {
                    k: v
                    for k, v in vars(event).items()
                    if not k.startswith("originator") and k not in INTERNAL_FIELDS
                }
                line = {
                    "position": item.position,
                    "topic": getattr(type(event), "TOPIC", type(event).__name__),
                    "subject_id": str(event.originator_id),
                    "subject_version": event.originator_version,
                    **payload,
                }
                typer.echo(json.dumps(line, default=_json_default))
            position = batch[-1].position


@projections_app.command("rebuild")
def rebuild() -> None:
    """Drop the profile views and replay the whole ledger into them."""
    with _runtime(catch_up=False) as rt:
        started = time.perf_counter()
        count = rt.projection.rebuild(rt.ledger)
        elapsed = time.perf_counter() - started
        console.print(f"rebuilt '{rt.projection.name}' from {count} events in {elapsed:.2f} s")


def _settings() -> Settings:
    """The environment's settings, bad ones named by field."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None
    return settings


def _runtime(*, catch_up: bool = True) -> AbstractContextManager[Runtime]:
    """Opens the runtime from the environment's settings."""
    return open_ledger_runtime(_settings(), catch_up=catch_up)


def register(app: typer.Typer) -> None:
    app.command()(demo)
    app.command()(history)
    app.command()(replay)
    app.add_typer(projections_app, name="projections")
