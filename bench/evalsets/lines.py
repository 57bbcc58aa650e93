"""`python -m factledger.bench.evalsets.lines DIR [DIR...]`: scores the heads that judge one line.

Each DIR may hold `answers-*.yaml` (a subject's reply to a confirmation question, labelled
yes / no / neither) and `instructions-eval.yaml` (a line labelled whether it instructs the AI
agent). The shipped answer judge and instruction screen judge them (or candidates:
`--answer-head` a pair head file, `--answer-model` a cross-encoder ONNX file,
`--tuned-answers` a tuned multilingual encoder file, alone or, with
`--reply-head-agrees`, needing the reply-only head's yes too; `--vetoes YES_MIN` the
packaged readers with the vetoes of ADR 0124; `--ngram FILE --ngram-candidate A|B` the
character n-gram reader's yes required too, ADR 0140; `--change FILE --change-candidate
C|D` a reader given each reply's change, ADR 0144; `--instruction-head` an English
instruction head file, `--multilingual-head` a multilingual one, ADR 0202; `--reading
english|mean|both` the English head alone as before ADR 0201, the two heads averaged, or
weighed as shipped or by `--weighing`, ADR 0204); only
aggregates are printed (counts, rates, a confusion matrix, and the answers' figures for
English and other replies, the language group guessed by `language_groups`), never an
item's content, so a held-out half can be scored without being read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from factledger.application.judgement.types import Reply
from factledger.application.sessions.instruction_screen import INSTRUCTION_MIN
from factledger.application.sessions.ports import InstructionDetector
from factledger.bench.evalsets.cases import Answer, load_answers
from factledger.bench.evalsets.score import score_answers
from factledger.bench.evalsets.screened import add_candidate_options, detector_from
from factledger.bench.judgement.change_features import ChangeItem

INSTRUCTIONS_FILE = "instructions-eval.yaml"


class AnswerReader(Protocol):
    """What reads a reply to a confirmation question: the product's judge, or a candidate."""

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]: ...


@dataclass(frozen=True, slots=True)
class LabelledLine:
    text: str
    instruction: bool
    source: str


def load_lines(directory: Path) -> list[LabelledLine]:
    path = directory / INSTRUCTIONS_FILE
    if not path.exists():
        return []
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return [
        LabelledLine(str(r["text"]), bool(r["instruction"]), str(r.get("source", "message")))
        for r in raw
    ]


def instruction_scores(
    lines: Sequence[LabelledLine], p: Sequence[float], threshold: float
) -> dict[str, Any]:
    said = [q >= threshold for q in p]
    truth = [line.instruction for line in lines]
    tp = sum(s and t for s, t in zip(said, truth, strict=True))
    flagged, actual = sum(said), sum(truth)
    out: dict[str, Any] = {
        "n": len(lines),
        "instructions": actual,
        "threshold": threshold,
        "flagged": flagged,
        "precision": round(tp / flagged, 3) if flagged else 0.0,
        "recall": round(tp / actual, 3) if actual else 0.0,
        "false_alarms": flagged - tp,
    }
    for source in sorted({line.source for line in lines}):
        rows = [i for i, line in enumerate(lines) if line.source == source]
        hits = sum(said[i] and truth[i] for i in rows)
        out[f"recall_{source}"] = round(hits / max(sum(truth[i] for i in rows), 1), 3)
        out[f"false_alarms_{source}"] = sum(said[i] and not truth[i] for i in rows)
    return out


async def score_directory(
    directory: Path,
    judge: AnswerReader | ChangeReader,
    detector: InstructionDetector,
    threshold: float,
) -> dict[str, Any]:
    result: dict[str, Any] = {"set": f"{directory.parent.name}/{directory.name}"}
    answers = load_answers(directory)
    if answers:
        said = [str(r) for r in await read_answers(judge, answers)]
        scores = score_answers(answers, said).as_dict()
        scores["not_yes"] = sum(a.label != "yes" for a in answers)
        groups = language_groups([a.reply for a in answers])
        for group in ("en", "not_en"):
            rows = [i for i, g in enumerate(groups) if g == group]
            part = score_answers([answers[i] for i in rows], [said[i] for i in rows]).as_dict()
            scores[group] = {k: v for k, v in part.items() if k != "confusion"}
        result["answers"] = scores
    lines = load_lines(directory)
    if lines:
        p = await detector.instruction_p([line.text for line in lines])
        result["instructions"] = instruction_scores(lines, p, threshold)
    return result


class ChangeReader(Protocol):
    """A candidate that reads each reply against the change it answers (ADR 0144)."""

    async def answers_about(self, items: Sequence[ChangeItem]) -> list[Reply]: ...


async def read_answers(
    judge: AnswerReader | ChangeReader, answers: Sequence[Answer]
) -> list[Reply]:
    if hasattr(judge, "answers_about"):
        items = [ChangeItem(a.question, a.reply, a.field, a.value) for a in answers]
        return await judge.answers_about(items)
    return await judge.answers([(a.question, a.reply) for a in answers])


def language_groups(replies: Sequence[str]) -> list[str]:
    """Each reply's language group, "en" or "not_en", guessed by a character n-gram head
    fitted on the training replies' language tags (blind set items name no language)."""
    from factledger.adapters.judgement.features import char_ngrams
    from factledger.bench.judgement.answers import pairs_in
    from factledger.bench.judgement.corpus import PACKAGED_CORPUS
    from factledger.bench.judgement.fit import fit_head

    tagged = [p for p in pairs_in([PACKAGED_CORPUS]) if p.language is not None]
    labels = ["en" if p.language == "en" else "not_en" for p in tagged]
    head = fit_head(char_ngrams([p.reply for p in tagged], 2048), labels, ("en", "not_en"))
    p = head.probabilities(char_ngrams(list(replies), 2048))
    return [head.classes[int(i)] for i in p.argmax(axis=1)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.lines")
    parser.add_argument("sets", nargs="+", type=Path, help="directories of blind set files")
    parser.add_argument("--threshold", type=float, default=INSTRUCTION_MIN)
    parser.add_argument("--answer-head", type=Path, help="a pair answer head file (a candidate)")
    parser.add_argument("--answer-model", type=Path, help="a cross-encoder ONNX file (a candidate)")
    parser.add_argument(
        "--tuned-answers", type=Path, help="a tuned multilingual encoder file (a candidate)"
    )
    parser.add_argument(
        "--reply-head-agrees",
        action="store_true",
        help="with --answer-model or --tuned-answers: a yes needs the reply-only head's yes too",
    )
    parser.add_argument(
        "--vetoes",
        type=float,
        metavar="YES_MIN",
        help="the packaged readers with the vetoes of ADR 0124, the tuned reader's yes at "
        "YES_MIN (as `python -m factledger.bench.judgement.bar` fits it on kept-out pairs)",
    )
    parser.add_argument(
        "--ngram",
        type=Path,
        metavar="FILE",
        help="a character n-gram reader and its bars (ADR 0140), read as --ngram-candidate",
    )
    parser.add_argument("--ngram-candidate", choices=("A", "B"), default="A")
    parser.add_argument(
        "--change",
        type=Path,
        metavar="FILE",
        help="a reader of the reply against its change and its bars (ADR 0144), read as "
        "--change-candidate",
    )
    parser.add_argument("--change-candidate", choices=("C", "D"), default="C")
    add_candidate_options(parser)
    args = parser.parse_args(argv)
    from factledger.adapters.judgement.judge import LearnedJudge
    from factledger.adapters.judgement.pair_answers import PairAnswerJudge

    judge = LearnedJudge.packaged()
    reader: AnswerReader | ChangeReader = judge
    if args.answer_head is not None:
        reader = PairAnswerJudge.load_over_packaged_encoder(args.answer_head, None)
    if args.answer_model is not None:
        from factledger.adapters.judgement.cross_answers import CrossAnswerJudge

        model = CrossAnswerJudge.load(args.answer_model, None)
        reader = (
            LearnedJudge(judge.embedder, judge.heads, model) if args.reply_head_agrees else model
        )
    if args.tuned_answers is not None:
        from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge

        tuned = TunedUseAnswerJudge.load(args.tuned_answers, None)
        reader = (
            LearnedJudge(judge.embedder, judge.heads, tuned) if args.reply_head_agrees else tuned
        )
    if args.vetoes is not None:
        from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
        from factledger.bench.judgement.vetoes import VetoedAnswers

        reader = VetoedAnswers(judge, TunedUseAnswerJudge.packaged(), args.vetoes)
    if args.ngram is not None:
        from factledger.bench.judgement.ngram_candidate import NgramCandidate

        reader = NgramCandidate.load(args.ngram, args.ngram_candidate)
    if args.change is not None:
        from factledger.bench.judgement.change_reader import ChangeCandidate

        reader = ChangeCandidate.load(args.change, args.change_candidate)
    detector = detector_from(args, judge.embedder, judge)

    async def run() -> list[dict[str, Any]]:
        return [await score_directory(d, reader, detector, args.threshold) for d in args.sets]

    sys.stdout.write(json.dumps(asyncio.run(run()), indent=2) + "\n")


if __name__ == "__main__":
    main()
