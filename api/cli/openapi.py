"""`factledger openapi`: the HTTP API's OpenAPI document, as `factledger serve` serves it at
`/openapi.json`, without starting a server (the TypeScript client is generated from it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from factledger.api.cli.serve import create_served_app


def openapi(
    output: Annotated[
        Path | None, typer.Option(help="Write the document to this file (default: stdout).")
    ] = None,
) -> None:
    """Print the HTTP API's OpenAPI document (JSON)."""
    # Building the app opens nothing: the runtime is opened by its lifespan, which never runs.
    # Every route at once: a served app's document is built when first asked, once they are in.
    document = create_served_app(routes_after_ready=False).openapi()
    # Sorted keys and a final newline keep the checked-in copy stable under regeneration.
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")


def register(app: typer.Typer) -> None:
    app.command("openapi")(openapi)
