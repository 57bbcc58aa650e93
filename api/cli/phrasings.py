"""`factledger extraction phrasings`: score an extractor on how things are said."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
import yaml

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.log_setup import configure_logging
from factledger.bench.phrasing_eval import evaluate, parse_cases

PHRASING_SET = Path("tests/data/phrasing_set.yaml")


def phrasings_command(
    labelled_set: Annotated[
        Path, typer.Option("--set", exists=True, dir_okay=False, help="Labelled set (YAML).")
    ] = PHRASING_SET,
    guidance: Annotated[
        Path | None, typer.Option(exists=True, dir_okay=False, help="Guidance YAML to use.")
    ] = None,
    tag: Annotated[str | None, typer.Option(help="Score only the cases with this tag.")] = None,
    verbose: Annotated[
        bool, typer.Option(help="List the problems of the cases not held out (never the others).")
    ] = False,
) -> None:
    """Score the rule extractor on tenses, contractions, indirect statements, small talk,
    requests about memory, fragments, note shape and later reasons: all, dev and held-out."""
    configure_logging(json_lines=False, level="WARNING")
    cases = parse_cases(yaml.safe_load(labelled_set.read_text(encoding="utf-8")))
    cases = [c for c in cases if tag is None or tag in c.tags]
    if not cases:
        raise typer.BadParameter("no case has that tag", param_hint="--tag")
    scores = asyncio.run(evaluate(RuleExtractor.from_guidance_file(guidance), cases))
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
