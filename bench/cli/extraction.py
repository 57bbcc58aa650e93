"""`factledger-lab extraction ...`: score an extractor against the labelled sets."""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import httpx
import typer
import yaml
from pydantic import SecretStr

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.backend import build_extractor
from factledger.api.bootstrap.judgement import learned_extractor
from factledger.api.settings import (
    ExtractorSettings,
    LearnedExtractorSettings,
    OpenAICompatibleExtractorSettings,
    RuleExtractorSettings,
)
from factledger.application.memory.extraction import ExtractionRequest
from factledger.bench.cli.phrasings import phrasings_command
from factledger.bench.extraction_eval import (
    CaseResult,
    ExtractionCase,
    ExtractionScores,
    evaluate,
    parse_cases,
    report_lines,
)
from factledger.bench.guidance_eval import GuidanceSet, evaluate_set
from factledger.bench.guidance_eval import guidance_sets as load_sets
from factledger.bench.proposal_eval import ProposalScores
from factledger.bench.proposal_eval import evaluate as evaluate_proposals
from factledger.bench.proposal_eval import parse_cases as parse_proposal_cases
from factledger.domain.transcript import Message, Role

extraction_app = typer.Typer(help="Extraction evaluations.", no_args_is_help=True)

DEFAULT_SET = Path("tests/data/extraction_set.yaml")
GUIDANCE_SETS = Path("tests/data/extraction_sets")  # one labelled set per other guidance
PROPOSAL_SET = Path("tests/data/proposal_set.yaml")


class ExtractorChoice(StrEnum):
    RULE = "rule"
    LEARNED = "learned"
    LEARNED_SENTENCES = "learned-sentences"  # the learned parts alone, no rule (ADR 0125)
    OPENAI = "openai"


class ProposerExtractor(StrEnum):
    RULE = "rule"
    LEARNED = "learned"
    LEARNED_SENTENCES = "learned-sentences"


@extraction_app.command("eval")
def eval_command(
    extractor: Annotated[ExtractorChoice, typer.Option(help="Extractor to score.")] = (
        ExtractorChoice.RULE
    ),
    labelled_set: Annotated[
        Path, typer.Option("--set", exists=True, dir_okay=False, help="Labelled set (YAML).")
    ] = DEFAULT_SET,
    tag: Annotated[str | None, typer.Option(help="Score only the cases with this tag.")] = None,
    guidance: Annotated[
        Path | None, typer.Option(exists=True, dir_okay=False, help="Guidance YAML to use.")
    ] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible URL, up to /v1.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name for --extractor openai.")] = None,
    api_key: Annotated[
        str | None, typer.Option(envvar="FACTLEDGER_EXTRACTOR_API_KEY", show_default=False)
    ] = None,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds per LLM call.")] = 120.0,
    verbose: Annotated[bool, typer.Option(help="List every miss, extra fact and error.")] = False,
    guidance_sets: Annotated[
        Path | None,
        typer.Option(
            file_okay=False,
            help="Folder of labelled sets, one per guidance (<name>.yaml, read with the "
            "conversation type <name>); a missing folder prints the default guidance only.",
        ),
    ] = GUIDANCE_SETS,
) -> None:
    """Print precision/recall of facts, stated-vs-inferred accuracy, update detection,
    condition preservation and safety violations for an extractor; then one line per
    guidance (default, and each of `--guidance-sets`) with precision and recall on its dev
    and held-out cases apart."""
    cases = parse_cases(yaml.safe_load(labelled_set.read_text(encoding="utf-8")))
    if tag is not None:
        cases = [c for c in cases if tag in c.tags]
    if not cases:
        raise typer.BadParameter("no case has that tag", param_hint="--tag")
    chosen: ExtractorSettings
    if extractor is ExtractorChoice.RULE:
        chosen = RuleExtractorSettings(guidance_path=guidance)
    elif extractor is ExtractorChoice.LEARNED:
        chosen = LearnedExtractorSettings(guidance_path=guidance)
    elif extractor is ExtractorChoice.LEARNED_SENTENCES:
        chosen = LearnedExtractorSettings(candidates="sentences")
    else:
        if not base_url or not model:
            raise typer.BadParameter("--extractor openai needs --base-url and --model")
        chosen = OpenAICompatibleExtractorSettings(
            base_url=base_url,
            model=model,
            api_key=SecretStr(api_key) if api_key else None,
            timeout_s=timeout,
            guidance_path=guidance,
        )
    scores, per_guidance, elapsed_ms = asyncio.run(
        _evaluate_with(chosen, cases, load_sets(labelled_set, guidance_sets), tag)
    )
    typer.echo(f"extractor                    {extractor.value}")
    typer.echo("\n".join(report_lines(scores)))
    typer.echo(f"ms per transcript            {elapsed_ms / len(cases):.3f} (extraction + scoring)")
    typer.echo("per guidance (slotted facts only where the set says so; tag filter applies)")
    for line in per_guidance:
        typer.echo(line)
    if verbose:
        typer.echo("\n".join(_details(scores)))


@extraction_app.command("proposals")
def proposals_command(
    labelled_set: Annotated[
        Path, typer.Option("--set", exists=True, dir_okay=False, help="Labelled set (YAML).")
    ] = PROPOSAL_SET,
    guidance: Annotated[
        Path | None, typer.Option(exists=True, dir_okay=False, help="Guidance YAML to use.")
    ] = None,
    verbose: Annotated[bool, typer.Option(help="List every missed and extra proposal.")] = False,
    tag: Annotated[
        str | None, typer.Option(help="Score only the cases carrying this tag (e.g. batch2).")
    ] = None,
    extractor: Annotated[
        ProposerExtractor,
        typer.Option(
            help="rule: the rules alone; learned: the product's default (ADR 0119); "
            "learned-sentences: the learned parts alone (ADR 0125)."
        ),
    ] = ProposerExtractor.RULE,
) -> None:
    """Score the product's proposer (the extractor, the kind's fields, the no-noise plan) on
    multi-session conversations: precision, recall, origin accuracy, condition preservation,
    wrong-field rate and duplicates, for every case and for the held-out third."""
    cases = parse_proposal_cases(yaml.safe_load(labelled_set.read_text(encoding="utf-8")))
    cases = [c for c in cases if tag is None or tag in c.tags]
    rules = RuleExtractor.from_guidance_file(guidance)
    scores = asyncio.run(
        evaluate_proposals(
            rules
            if extractor is ProposerExtractor.RULE
            else learned_extractor(
                LearnedExtractorSettings(
                    guidance_path=guidance,
                    candidates="sentences"
                    if extractor is ProposerExtractor.LEARNED_SENTENCES
                    else "rules",
                ),
                rules,
            ),
            cases,
        )
    )
    held = ProposalScores(tuple(r for r in scores.results if "heldout" in r.case.tags))
    tuned = ProposalScores(tuple(r for r in scores.results if "heldout" not in r.case.tags))
    multi = ProposalScores(tuple(r for r in scores.results if len(r.case.sessions) > 1))
    parts = (("all", scores), ("tuning", tuned), ("heldout", held), ("multi-session", multi))
    for name, part in parts:
        typer.echo(part.line(name))
    if verbose:
        for result in scores.results:
            for missed in result.missed:
                typer.echo(f"{result.case.id}: missed session {missed.session} {missed.field}")
            for extra in result.extra:
                typer.echo(
                    f"{result.case.id}: extra session {extra.session} {extra.proposal.field}"
                )


async def _evaluate_with(
    settings: ExtractorSettings,
    cases: list[ExtractionCase],
    sets: list[GuidanceSet],
    tag: str | None,
) -> tuple[ExtractionScores, list[str], float]:
    """The main set's scores, one line per guidance, and the main set's time (ms)."""
    async with httpx.AsyncClient() as http:
        extractor = build_extractor(settings, http)
        started = time.perf_counter()
        scores = await evaluate(extractor, cases)
        elapsed_ms = (time.perf_counter() - started) * 1000
        lines = [(await evaluate_set(extractor, s, tag=tag)).line() for s in sets]
        return scores, lines, elapsed_ms


def _details(scores: ExtractionScores) -> list[str]:
    lines: list[str] = []
    for result in scores.results:
        problems = _problems(result)
        if problems:
            lines.append(f"- {result.case.id}")
            lines.extend(f"    {p}" for p in problems)
    return lines or ["every case matched"]


def _problems(result: CaseResult) -> list[str]:
    problems = [f"missed: slot={e.slot} keywords={list(e.keywords)}" for e in result.missed]
    problems += [f"extra: {f.text!r} slot={f.slot}" for f in result.extra]
    for expected, fact in result.pairs:
        if expected.relation != fact.relation or expected.inferred != fact.is_inference:
            problems.append(f"wrong relation or inference: {fact.text!r}")
        if expected.condition and expected.condition.lower() not in (fact.condition or "").lower():
            problems.append(f"condition lost: {fact.text!r}")
    problems += [f"safety: {v}" for v in result.safety_violations]
    return problems


@extraction_app.command("locomo-coverage")
def locomo_coverage(
    path: Annotated[
        Path, typer.Option(exists=True, dir_okay=False, help="locomo10.json (read, never copied).")
    ],
) -> None:
    """Run the rule extractor over LoCoMo, each speaker in turn as the subject, and print how
    many of the turns the QA labels cite as evidence some fact cites (the ceiling of a
    retrieval scored by source turns), facts per turn and time per message."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rule = RuleExtractor()
    covered: set[tuple[int, str]] = set()
    turns = facts = 0
    seconds = 0.0
    for number, sample in enumerate(data):
        conversation = sample["conversation"]
        for key, session in conversation.items():
            if not re.fullmatch(r"session_\d+", key) or not isinstance(session, list):
                continue
            stamp = conversation[f"{key}_date_time"] + " +0000"  # LoCoMo dates carry no zone
            when = datetime.strptime(stamp, "%I:%M %p on %d %B, %Y %z")
            for speaker in (conversation["speaker_a"], conversation["speaker_b"]):
                roles = [Role.SUBJECT if t["speaker"] == speaker else Role.AGENT for t in session]
                transcript = [Message(r, t["text"]) for r, t in zip(roles, session, strict=True)]
                started = time.perf_counter()
                found = rule.extract_now(ExtractionRequest(transcript, when))
                seconds += time.perf_counter() - started
                turns += roles.count(Role.SUBJECT)
                facts += len(found)
                cited = {i for f in found for i in f.source_indexes if roles[i] is Role.SUBJECT}
                covered |= {(number, session[i]["dia_id"]) for i in cited}
    evidence = {
        (number, f"D{s}:{t}")
        for number, sample in enumerate(data)
        for qa in sample["qa"]
        for s, t in re.findall(r"D(\d+):(\d+)", " ".join(map(str, qa.get("evidence", []))))
    }
    hit = len(evidence & covered)
    typer.echo(f"subject turns              {turns}")
    typer.echo(f"facts per subject turn     {facts / max(turns, 1):.3f}")
    typer.echo(f"subject turns cited        {len(covered) / max(turns, 1):.3f}")
    typer.echo(
        f"evidence turns cited       {hit / max(len(evidence), 1):.3f} ({hit}/{len(evidence)})"
    )
    typer.echo(f"ms per message             {seconds * 1000 / max(turns * 2, 1):.3f}")


extraction_app.command("phrasings")(phrasings_command)


def register(app: typer.Typer) -> None:
    app.add_typer(extraction_app, name="extraction")
