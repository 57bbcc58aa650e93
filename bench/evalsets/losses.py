"""`python -m factledger.bench.evalsets.losses DIR [DIR...]`: where each true fact not
proposed is lost, on a blind set's **dev** half (it reads the cases; never a held-out half).

The cases are played as the scorer plays them (`run.run_case`, the learned extractor and
judgement), with the learned extractor's calls recorded: the request the proposer made, the
rules' own facts, the extractor's facts and the QA reader's answers for every asked field at
no floor (each line's best spans and their margins over "no value"). Each missed expected
proposal is then put in the first class that holds:

- `other_value`: the session proposed the field, with a value lacking the keywords;
- `other_field`: a proposal of the session under another field holds the keywords;
- `agent_words`: the keywords are in no subject line of the session but in the agent's (the
  subject confirmed what the agent said);
- `not_in_a_line`: in no single line (a paraphrase, words across lines, a normalised value);
- `extracted_not_proposed`: the extractor gave a fact of the field holding them (the
  candidates' mapping or the ledger refused it: hedge, evidence, a duplicate, the current value);
- `rules_dropped`: the rules gave such a fact and the heads dropped it;
- `reader_below_floor`: the QA reader's span holding them scored under the field's floor;
- `reader_outranked`: it cleared the floor but another span of the field was chosen;
- `reader_no_span`: none of the reader's spans for the field holds them.

The counts are given overall, by field and class, and by domain, field and class
(`missed_by_domain_field_class`, `+proposed` folded in: ADR 0129); `--detail` names each
miss's domain.
`--updates` classifies only the expected proposals that update an earlier value (ADR 0128).
`--questions` classifies instead each question whose right note is not in the top 3, and each
stale note in the top 3 (`question_losses`, ADR 0132).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.judgement.qa_reader.judge import QaReadingJudge
from factledger.adapters.judgement.qa_reader.reader import (
    FieldAnswer,
    QaFieldReader,
    subject_lines,
)
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Needs
from factledger.api.log_setup import configure_logging
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest
from factledger.bench.evalsets.cases import Case, Expected, load_cases
from factledger.bench.evalsets.question_losses import (
    TurnRecorder,
    recording_turns,
    tally_questions,
)
from factledger.bench.evalsets.reader_file import add_value_fit_file_options, value_fit_file_of
from factledger.bench.evalsets.run import (
    TENANT,
    CaseRun,
    add_agreement_option,
    blind_settings,
    run_case,
)
from factledger.bench.evalsets.score import holds_all, match_expected, value_proposals
from factledger.testing.manual_clock import ManualClock

NO_FLOOR = -1e9


@dataclass(frozen=True, slots=True)
class Extraction:
    """One proposer's call of the learned extractor, as recorded."""

    request: ExtractionRequest
    rules: tuple[ExtractedFact, ...]
    facts: tuple[ExtractedFact, ...]
    read: tuple[FieldAnswer, ...]  # the reader's answers at no floor
    floors: dict[str, float]


@dataclass(slots=True)
class Recorder:
    calls: list[Extraction] = field(default_factory=list)


def _unfloored(reader: QaFieldReader) -> QaFieldReader:
    reader._ready()
    # The product's slack (ADR 0227): a span is judged by the words the product would propose.
    return QaFieldReader(
        b"", NO_FLOOR, NO_FLOOR, span_slack=reader.span_slack, _loaded=reader._loaded
    )


@contextmanager
def recording(recorder: Recorder) -> Iterator[None]:
    """Records every learned extraction asked for fields (the proposer's) while open."""
    original = LearnedExtractor.extract

    async def extract(self: LearnedExtractor, request: ExtractionRequest) -> list[ExtractedFact]:
        facts = await original(self, request)
        if request.fields and isinstance(self.judge, QaReadingJudge):
            reader = self.judge.reader
            names = [f.field for f in request.fields]
            lists = frozenset(f.field for f in request.fields if f.many)
            held = frozenset(f.field for f in request.fields if f.held)
            read = await asyncio.to_thread(
                _unfloored(reader).answers_sync, subject_lines(request.transcript), names, lists
            )
            recorder.calls.append(
                Extraction(
                    request,
                    tuple(await self.rules.extract(request)),
                    tuple(facts),
                    tuple(read),
                    {n: reader.floor_of(n, lists, held) for n in names},
                )
            )
        return facts

    LearnedExtractor.extract = extract  # type: ignore[method-assign]
    try:
        yield
    finally:
        LearnedExtractor.extract = original  # type: ignore[method-assign]


def _call_of(case: Case, n: int, calls: Sequence[Extraction]) -> Extraction | None:
    """The call that read session `n`: the one most of whose lines are (part of) its lines;
    a line may have lost a request sentence or a redacted span."""
    said = [t for _, t in case.sessions[n].lines]

    def shared(call: Extraction) -> int:
        texts = [m.text for m in call.request.transcript if m.text]
        return sum(any(t in line for line in said) for t in texts)

    best = max(calls, key=shared, default=None)
    return best if best is not None and shared(best) > 0 else None


def _reader_class(e: Expected, call: Extraction) -> tuple[str, float | None]:
    spans = [a for a in call.read if a.field == e.field]
    holding = [a for a in spans if holds_all(a.value, e.keywords)]
    if not holding:
        return "reader_no_span", None
    best = max(a.margin for a in holding)
    if best < call.floors.get(e.field, 0.0):
        return "reader_below_floor", best
    return "reader_outranked", best


def classify(e: Expected, n: int, run: CaseRun, call: Extraction | None) -> tuple[str, Any]:
    """The class of a missed expected proposal, and the reader's margin where it has one;
    `+proposed` when the session proposed the field with a value lacking the keywords."""
    made = [m for m in value_proposals(run.made) if m.session == n]
    suffix = "+proposed" if any(m.proposal.field == e.field for m in made) else ""
    if any(holds_all(m.value, e.keywords) for m in made if m.proposal.field != e.field):
        return "other_field" + suffix, None
    lines = run.case.sessions[n].lines
    if not any(holds_all(t, e.keywords) for r, t in lines if r == "subject"):
        in_agent = any(holds_all(t, e.keywords) for _, t in lines)
        return ("agent_words" if in_agent else "not_in_a_line") + suffix, None
    if call is None:
        return "not_in_a_line" + suffix, None
    slot = next((f.slot for f in call.request.fields if f.field == e.field), e.field)
    if any(f.slot == slot and holds_all(f.value or f.text, e.keywords) for f in call.facts):
        return "extracted_not_proposed" + suffix, None
    if any(f.slot == slot and holds_all(f.value or f.text, e.keywords) for f in call.rules):
        return "rules_dropped" + suffix, None
    name, margin = _reader_class(e, call)
    return name + suffix, margin


async def losses(
    directory: Path,
    detail: list[dict[str, Any]] | None = None,
    *,
    agreement: bool = False,
    only_updates: bool = False,
    held_floor: float | None = None,
    value_fit_file: tuple[Path, str] | None = None,
) -> dict[str, Any]:
    if "heldout" in directory.parts:
        raise SystemExit("losses reads the cases: dev halves only")
    cases = load_cases(directory)
    recorder = Recorder()
    classes: Counter[str] = Counter()
    by_field: Counter[str] = Counter()
    by_domain: Counter[str] = Counter()
    margins: list[float] = []
    clock = ManualClock(min(s.at for c in cases for s in c.sessions))
    needs = Needs(sessions=False, idempotency=False, run_sync=False, imports=False)
    with tempfile.TemporaryDirectory(prefix="factledger-losses-") as data_dir:
        extractor: dict[str, Any] = {"kind": "learned", "qa_reader_agreement": agreement}
        if held_floor is not None:
            extractor["qa_reader_held_floor"] = held_floor
        if value_fit_file is not None:
            extractor["value_fit_path"], extractor["value_fit_sha256"] = value_fit_file
        settings = blind_settings(Path(data_dir), extractor, "bare")
        async with open_runtime(settings, needs, clock=clock) as runtime:
            for case in cases:
                recorder.calls.clear()
                with recording(recorder):
                    run = await run_case(runtime, clock, case)
                _tally(
                    run, recorder.calls, classes, by_field, by_domain, margins, detail, only_updates
                )
    return {
        "set": directory.parent.name,
        "missed": sum(classes.values()),
        "classes": dict(sorted(classes.items())),
        "below_floor_margins": sorted(round(m, 1) for m in margins),
        "missed_by_field_class": dict(by_field.most_common(25)),
        "missed_by_domain_field_class": dict(sorted(by_domain.items())),
    }


async def question_losses(
    directory: Path, detail: list[dict[str, Any]] | None = None, candidates: str | None = None
) -> dict[str, Any]:
    """Where each question is lost (`question_losses`), on a dev half; `candidates` names
    the learned extractor's candidates when not the product's default (ADR 0157)."""
    if "heldout" in directory.parts:
        raise SystemExit("losses reads the cases: dev halves only")
    cases = load_cases(directory)
    misses: Counter[str] = Counter()
    stale: Counter[str] = Counter()
    clock = ManualClock(min(s.at for c in cases for s in c.sessions))
    needs = Needs(sessions=False, idempotency=False, run_sync=False, imports=False)
    with tempfile.TemporaryDirectory(prefix="factledger-losses-") as data_dir:
        extractor: dict[str, Any] = {"kind": "learned"}
        if candidates is not None:
            extractor["candidates"] = candidates
        settings = blind_settings(Path(data_dir), extractor, "bare")
        async with open_runtime(settings, needs, clock=clock) as runtime:
            recorder = TurnRecorder(lambda i: runtime.ledger.subject(TENANT, i))
            for case in cases:
                recorder.turns.clear()
                with recording_turns(recorder):
                    run = await run_case(runtime, clock, case)
                tally_questions(run, recorder.turns, misses, stale, detail)
    return {
        "set": directory.parent.name,
        "missed": sum(misses.values()),
        "miss_classes": dict(misses.most_common()),
        "stale_notes": sum(stale.values()),
        "stale_classes": dict(stale.most_common()),
    }


def _tally(
    run: CaseRun,
    calls: Sequence[Extraction],
    classes: Counter[str],
    by_field: Counter[str],
    by_domain: Counter[str],
    margins: list[float],
    detail: list[dict[str, Any]] | None = None,
    only_updates: bool = False,
) -> None:
    made = value_proposals(run.made)
    matched = match_expected(run.case, made)
    for n, session in enumerate(run.case.sessions):
        for i, e in enumerate(session.proposals):
            if (n, i) in matched or (only_updates and e.updates is None):
                continue
            name, margin = classify(e, n, run, _call_of(run.case, n, calls))
            classes[name] += 1
            by_field[f"{e.field}:{name}"] += 1
            by_domain[f"{run.case.domain}/{e.field}:{name.removesuffix('+proposed')}"] += 1
            if detail is not None:
                detail.append(
                    {
                        "case": run.case.id,
                        "domain": run.case.domain,
                        "session": n,
                        "field": e.field,
                        "keywords": e.keywords,
                        "updates": e.updates,
                        "proposed_before": any(
                            m.proposal.field == e.field for m in made if m.session < n
                        ),
                        "class": name,
                        "margin": margin,
                        "lines": run.case.sessions[n].lines,
                        "made": [(m.proposal.field, m.value) for m in run.made if m.session == n],
                    }
                )
            if name.startswith("reader_below_floor") and margin is not None:
                margins.append(margin)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.losses")
    parser.add_argument("sets", nargs="+", type=Path, help="blind sets' dev directories")
    add_agreement_option(parser)
    parser.add_argument("--detail", type=Path, help="also write each miss, with its lines, here")
    parser.add_argument(
        "--updates", action="store_true", help="only the expected updates of an earlier value"
    )
    parser.add_argument(
        "--held-floor", type=float, help="the QA reader's floor for held fields (ADR 0128)"
    )
    parser.add_argument(
        "--questions", action="store_true", help="where each question is lost, not each fact"
    )
    add_value_fit_file_options(parser)
    parser.add_argument(
        "--candidates",
        choices=("rules", "sentences", "rules_and_sentences"),
        help="with --questions: the learned extractor's candidates (default: the product's)",
    )
    args = parser.parse_args(argv)
    if args.candidates is not None and not args.questions:
        parser.error("--candidates: only with --questions")
    value_fit_file = value_fit_file_of(args, parser)
    if value_fit_file is not None and args.questions:
        parser.error("--value-fit-file: not with --questions (they read the packaged head)")
    configure_logging(json_lines=False, level="WARNING")
    detail: list[dict[str, Any]] | None = [] if args.detail else None
    results = (
        [asyncio.run(question_losses(d, detail, args.candidates)) for d in args.sets]
        if args.questions
        else [
            asyncio.run(
                losses(
                    d,
                    detail,
                    agreement=args.agreement,
                    only_updates=args.updates,
                    held_floor=args.held_floor,
                    value_fit_file=value_fit_file,
                )
            )
            for d in args.sets
        ]
    )
    sys.stdout.write(json.dumps(results, indent=2) + "\n")
    if args.detail is not None:
        args.detail.write_text(json.dumps(detail, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
