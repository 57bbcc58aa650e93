"""`factledger webhooks run | log`: deliver the configured webhooks, read their delivery log."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from factledger.api.bootstrap.webhooks import open_webhooks, opened_delivery_log
from factledger.api.log_setup import configure_logging
from factledger.api.settings import Settings, SettingsError, load_settings

webhooks_app = typer.Typer(help="Signed webhooks of the tenants' events.", no_args_is_help=True)


def _settings() -> Settings:
    try:
        return load_settings()
    except SettingsError as exc:
        raise typer.BadParameter(str(exc)) from None


async def _run(settings: Settings, *, once: bool) -> None:
    async with open_webhooks(settings) as dispatcher:
        if once:
            typer.echo(f"{await dispatcher.run_once()} attempt(s)")
            return
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await dispatcher.run(poll_s=settings.webhooks.poll_s, stop=stop)


@webhooks_app.command("run")
def run(
    once: Annotated[bool, typer.Option(help="One pass, then exit.")] = False,
) -> None:
    """Deliver each endpoint's events (FACTLEDGER_WEBHOOKS__ENDPOINTS) until SIGINT/SIGTERM.

    Run one such process per deployment: positions are kept in its delivery log (a SQLite
    file, or a table beside the PostgreSQL event store)."""
    settings = _settings()
    if not settings.webhooks.endpoints:
        raise typer.BadParameter("no endpoints: set FACTLEDGER_WEBHOOKS__ENDPOINTS")
    configure_logging(json_lines=settings.log_json)
    asyncio.run(_run(settings, once=once))


async def _show(settings: Settings, endpoint: str, limit: int) -> None:
    async with opened_delivery_log(settings) as log:
        typer.echo(f"position {await log.position(endpoint)}")
        for d in await log.deliveries(endpoint, limit=limit):
            typer.echo(
                f"{d.at.isoformat()}\tposition={d.position}\tattempt={d.attempt}"
                f"\t{d.outcome.value}\tstatus={d.status}\terror={d.error}"
            )


@webhooks_app.command("log")
def show_log(
    endpoint: Annotated[str, typer.Argument(help="The endpoint's id.")],
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
) -> None:
    """An endpoint's position and its latest delivery attempts, newest first."""
    settings = _settings()
    asyncio.run(_show(settings, endpoint, limit))


def register(app: typer.Typer) -> None:
    app.add_typer(webhooks_app, name="webhooks")
