"""`python -m factledger.bench.judgement.stance [--corpus DIR ...] [--reader-trained DIR ...]
[--out FILE]`: fits the answer-stance head (ADR 0121) on the labelled training conversations.

The packaged QA reader reads every session of the corpora as the product reads them (every
field asked at once, each field's floor); each answer it gives is labelled from the session's
labels: the words of a labelled proposal of the same field and line are `states` (`hedged`
when the proposal is), the words of something labelled not to propose are its reason
(negated: `denies`, question: `asks`, hypothetical, third_party, small_talk and joke:
`small_talk`), anything else `none`. Cases of a `--reader-trained` directory that the reader
was trained on are left out (their answers are the reader's memory, not its reading): only
their kept-out cases are read.

Five folds grouped by case give every answer an out-of-fold probability of stating its value;
the bar is the highest at which the out-of-fold answers that state a value keep at least
`KEEP_RIGHT` of themselves (ADR 0121's rule, written before any blind set was read). The
head is then fitted on every answer and written with its bar; the SHA-256 is printed to pin.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factledger.adapters.extraction.learned.stance_screen import reader_answers
from factledger.adapters.judgement.answer_stance import (
    HEAD,
    KEEPING,
    PACKAGED_ANSWER_STANCE,
    readings,
    stance_features,
)
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.qa_reader.reader import FieldAnswer, QaFieldReader, subject_lines
from factledger.application.judgement.stance import ReaderAnswer, Stance
from factledger.application.judgement.types import FieldStatement
from factledger.application.memory.ports import Embedder
from factledger.bench.judgement.conversations import (
    CONVERSATIONS,
    TrainingCase,
    TrainingSession,
    load_training_cases,
)
from factledger.bench.judgement.fit import fit_head
from factledger.bench.judgement.qa_reader.pairs import kept_out
from factledger.domain.transcript import Message, Role

DATA = Path(__file__).resolve().parent / "data" / CONVERSATIONS
# The shipped reader was trained on writers A and B's cases, bar their kept-out eighth.
READER_TRAINED = (DATA / "a", DATA / "b")
CORPORA = (DATA / "a", DATA / "b", DATA / "c", DATA / "d")
FOLDS = 5
KEEP_RIGHT = 0.95
BARS = tuple(n / 100 for n in range(5, 96, 5))
STANCE_OF_WHY = {
    "negated": Stance.DENIES,
    "question": Stance.ASKS,
    "hypothetical": Stance.HYPOTHETICAL,
    "third_party": Stance.THIRD_PARTY,
    "small_talk": Stance.SMALL_TALK,
    "joke": Stance.SMALL_TALK,
}
MIN_CLASS = 25  # a stance with fewer labelled answers is fitted as `none`, not learnt


@dataclass(frozen=True, slots=True)
class Example:
    case_id: str
    answer: ReaderAnswer
    stance: Stance


def _overlaps(start: int, end: int, at: int, words: str) -> bool:
    return start < at + len(words) and at < end


def label(answer: FieldAnswer, session: TrainingSession) -> Stance:
    for p in session.proposals:
        s = p.span
        if s.line == answer.index and s.field == answer.field:
            if _overlaps(answer.start, answer.end, s.start, s.text):
                return Stance.HEDGED if p.hedged else Stance.STATES
    for n in session.not_proposed:
        s = n.span
        if s.line == answer.index and _overlaps(answer.start, answer.end, s.start, s.text):
            return STANCE_OF_WHY.get(n.why, Stance.NONE)
    return Stance.NONE


def examples_of(reader: QaFieldReader, case: TrainingCase) -> list[Example]:
    fields = list(case.fields)
    lists = frozenset(f for f in fields if case.is_list(f))
    out = []
    for session in case.sessions:
        transcript = [
            Message(Role.SUBJECT if role == "subject" else Role.AGENT, text)
            for role, text in session.lines
        ]
        found = reader.answers_sync(subject_lines(transcript), fields, lists)
        statements = [FieldStatement(a.index, a.value, a.field, a.margin) for a in found]
        answers = reader_answers(transcript, statements, lists)
        out += [
            Example(case.id, answer, label(a, session))
            for a, answer in zip(found, answers, strict=True)
        ]
    return out


def read_corpora(
    reader: QaFieldReader, corpora: Sequence[Path], reader_trained: Sequence[Path]
) -> list[Example]:
    examples = []
    trained = {p.resolve() for p in reader_trained}
    for directory in corpora:
        cases = load_training_cases([directory]).cases
        if directory.resolve() in trained:
            cases = [c for c in cases if kept_out(c.id)]
        for case in cases:
            examples += examples_of(reader, case)
    return examples


def _fold(case_id: str) -> int:
    return zlib.crc32(f"stance:{case_id}".encode()) % FOLDS


def out_of_fold(
    x: np.ndarray, examples: Sequence[Example], classes: Sequence[str]
) -> np.ndarray:
    folds = np.array([_fold(e.case_id) for e in examples])
    y = targets(examples, classes)
    p = np.zeros(len(examples), dtype=np.float64)
    for k in range(FOLDS):
        test = folds == k
        head = fit_head(x[~test], [y[i] for i in np.flatnonzero(~test)], classes)
        p[test] = [r.states_p for r in readings(head, x[test], 0.5)]
    return p


def bar_figures(p: np.ndarray, right: np.ndarray) -> dict[float, dict[str, float]]:
    out = {}
    for bar in BARS:
        kept = p >= bar
        out[bar] = {
            "kept": int(kept.sum()),
            "right kept share": round(float((kept & right).sum() / max(right.sum(), 1)), 3),
            "precision": round(float((kept & right).sum() / max(kept.sum(), 1)), 3),
        }
    return out


def choose_bar(figures: dict[float, dict[str, float]]) -> float:
    """The highest bar at which the right answers keep at least `KEEP_RIGHT` of themselves."""
    ok = [b for b, f in figures.items() if f["right kept share"] >= KEEP_RIGHT]
    return max(ok) if ok else min(figures)


def classes_of(examples: Sequence[Example]) -> tuple[str, ...]:
    """The stances with at least `MIN_CLASS` answers, the keeping ones and `none` always."""
    counts = Counter(e.stance for e in examples)
    always = {*KEEPING, Stance.NONE}
    return tuple(s.value for s in Stance if s in always or counts[s] >= MIN_CLASS)


def targets(examples: Sequence[Example], classes: Sequence[str]) -> list[str]:
    return [e.stance.value if e.stance.value in classes else Stance.NONE.value for e in examples]


async def fit(
    embedder: Embedder, reader: QaFieldReader, corpora: Sequence[Path],
    reader_trained: Sequence[Path], out: Path,
) -> dict[str, object]:
    examples = read_corpora(reader, corpora, reader_trained)
    x = await stance_features(embedder, [e.answer for e in examples])
    right = np.array([e.stance in KEEPING for e in examples])
    classes = classes_of(examples)
    figures = bar_figures(out_of_fold(x, examples, classes), right)
    bar = choose_bar(figures)
    head = fit_head(x, targets(examples, classes), classes)
    sha = Heads({HEAD: head}, embedder.model_id, 0, 0.0, field_min=bar).save(out)
    return {
        "answers": len(examples),
        "labels": dict(Counter(e.stance.value for e in examples)),
        "classes fitted": list(classes),
        "cases": len({e.case_id for e in examples}),
        "reader precision (every answer)": round(float(right.mean()), 3),
        "out-of-fold, by bar": {str(b): f for b, f in figures.items()},
        "bar": bar,
        "out": str(out),
        "sha256": sha,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.stance")
    parser.add_argument("--corpus", type=Path, action="append", default=None)
    parser.add_argument("--reader-trained", type=Path, action="append", default=None)
    parser.add_argument("--out", type=Path, default=PACKAGED_ANSWER_STANCE)
    args = parser.parse_args(argv)
    corpora = args.corpus or list(CORPORA)
    trained = args.reader_trained if args.reader_trained is not None else list(READER_TRAINED)
    embedder = LearnedJudge.packaged().embedder
    report = asyncio.run(fit(embedder, QaFieldReader.packaged(), corpora, trained, args.out))
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
