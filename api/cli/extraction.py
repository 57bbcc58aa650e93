"""`factledger extraction try`: what the rule extractor makes of a few messages."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.application.memory.extraction import ExtractionContext, ExtractionRequest
from factledger.domain.transcript import Message, Role

extraction_app = typer.Typer(help="Fact extraction tools.", no_args_is_help=True)


@extraction_app.command("try")
def try_command(
    messages: Annotated[
        list[str],
        typer.Argument(help='Messages in order, "role: text" (role defaults to subject).'),
    ],
    when: Annotated[
        datetime | None, typer.Option("--date", help="Interaction date (default: now, UTC).")
    ] = None,
    guidance: Annotated[
        Path | None, typer.Option(exists=True, dir_okay=False, help="Guidance YAML to use.")
    ] = None,
    conversation_type: Annotated[
        str | None,
        typer.Option(help="Read as this conversation type (e.g. support_ticket)."),
    ] = None,
) -> None:
    """Show what the rule extractor makes of a few messages (for writing guidance files)."""
    occurred_at = when or datetime.now(UTC)
    if occurred_at.tzinfo is None:
        occurred_at = occurred_at.replace(tzinfo=UTC)
    context = ExtractionContext(conversation_type=conversation_type)
    request = ExtractionRequest([_message(m) for m in messages], occurred_at, context=context)
    for fact in RuleExtractor.from_guidance_file(guidance).extract_now(request):
        links = ",".join(fact.related_to)
        relation = f"{fact.relation.value}({links})" if fact.relation else "-"
        flags = " inferred" if fact.is_inference else ""
        sources = list(fact.source_indexes)
        typer.echo(f"{fact.key} [{fact.slot or '-'}] {relation}{flags} sources={sources}")
        typer.echo(f"    {fact.text}")
        if fact.condition:
            typer.echo(f"    condition: {fact.condition}")


def _message(raw: str) -> Message:
    role, sep, text = raw.partition(":")
    if sep and role.strip().lower() in {r.value for r in Role}:
        return Message(Role(role.strip().lower()), text.strip())
    return Message(Role.SUBJECT, raw.strip())


def register(app: typer.Typer) -> None:
    app.add_typer(extraction_app, name="extraction")
