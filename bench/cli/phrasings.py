"""`factledger-lab extraction phrasings`: score an extractor on how things are said."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import httpx
import typer
import yaml
from pydantic import SecretStr

from factledger.api.bootstrap.backend import build_extractor
from factledger.api.settings import (
    ExtractorSettings,
    OpenAICompatibleExtractorSettings,
    RuleExtractorSettings,
)
from factledger.bench.phrasing_eval import PhrasingCase, PhrasingScores, evaluate, parse_cases

PHRASING_SET = Path("tests/data/phrasing_set.yaml")


def phrasings_command(
    labelled_set: Annotated[
        Path, typer.Option("--set", exists=True, dir_okay=False, help="Labelled set (YAML).")
    ] = PHRASING_SET,
    guidance: Annotated[
        Path | None, typer.Option(exists=True, dir_okay=False, help="Guidance YAML to use.")
    ] = None,
    tag: Annotated[str | None, typer.Option(help="Score only the cases with this tag.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option(help="Score an OpenAI-compatible model at this URL (up to /v1) instead."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model name, with --base-url.")] = None,
    api_key: Annotated[
        str | None, typer.Option(envvar="FACTLEDGER_EXTRACTOR_API_KEY", show_default=False)
    ] = None,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds per LLM call.")] = 300.0,
    json_object: Annotated[
        bool, typer.Option(help="Ask for a JSON object (servers without JSON-schema output).")
    ] = False,
    verbose: Annotated[
        bool, typer.Option(help="List the problems of the cases not held out (never the others).")
    ] = False,
) -> None:
    """Score an extractor (the rule one unless --base-url) on tenses, contractions, indirect
    statements, small talk, requests about memory, fragments, note shape and later reasons:
    all, dev and held-out, with seconds per session."""
    cases = parse_cases(yaml.safe_load(labelled_set.read_text(encoding="utf-8")))
    cases = [c for c in cases if tag is None or tag in c.tags]
    if not cases:
        raise typer.BadParameter("no case has that tag", param_hint="--tag")
    chosen: ExtractorSettings = RuleExtractorSettings(guidance_path=guidance)
    if base_url is not None:
        if not model:
            raise typer.BadParameter("--base-url needs --model", param_hint="--model")
        chosen = OpenAICompatibleExtractorSettings(
            base_url=base_url,
            model=model,
            api_key=SecretStr(api_key) if api_key else None,
            timeout_s=timeout,
            guidance_path=guidance,
            response_format="json_object" if json_object else "json_schema",
        )
    scores = asyncio.run(_score(chosen, cases))
    for name, part in (
        ("all", scores),
        ("dev", scores.part(heldout=False)),
        ("heldout", scores.part(heldout=True)),
    ):
        typer.echo("\n".join(part.lines(name)))
    if verbose:
        # Held-out problems stay unlisted, so tuning on this output never sees them.
        for result in scores.part(heldout=False).results:
            for problem in result.problems:
                typer.echo(f"{result.case.id}: {problem}")


async def _score(settings: ExtractorSettings, cases: list[PhrasingCase]) -> PhrasingScores:
    async with httpx.AsyncClient() as http:
        return await evaluate(build_extractor(settings, http), cases)
