"""`python -m factledger.bench.judgement.stance [--corpus DIR ...] [--reader-trained DIR ...]
[--out FILE]`: fits the answer-stance heads (ADR 0121) on the labelled training conversations.

- The **stance** head, on every labelled span of the corpora: a proposal's words `states`
  (`hedged` when the proposal is), the words of something labelled not to propose its reason
  (negated: `denies`, question: `asks`, `hypothetical`, `third_party`, small_talk and joke:
  `small_talk`; what the agent said is no subject's sentence and is left out).
- The **answer** head, on the packaged QA reader's answers to the same conversations, read
  as the product reads them (every field asked at once, each field's floor): an answer on the
  words of a labelled proposal of the same field and line is the `field`'s, any other
  `other`. Cases of a `--reader-trained` directory that the reader was trained on are left
  out here (their answers are the reader's memory, not its reading): only their kept-out
  cases are read.

Five folds grouped by case give every span and answer an out-of-fold probability. The
stance bar is the highest at which the labelled proposals keep at least `STANCE_KEEP` of
themselves; the answer bar the highest at which, with the stance bar, the answers the product
would propose (a single field's best answer in the session among those kept, a list field's
every one) keep at least `KEEP_RIGHT` of the right ones they hold without either head (ADR
0121's rule, written before any blind set was read). The heads are then fitted on all of it
and written with the bars; the SHA-256 is printed to pin.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import zlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.extraction.learned.stance_screen import reader_answers
from factledger.adapters.judgement.answer_stance import (
    FIT_CLASSES,
    KEEPING,
    PACKAGED_ANSWER_STANCE,
    StanceHeads,
    Vectors,
    answer_features,
    keep_p,
    stance_features,
)
from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.qa_reader.reader import FieldAnswer, QaFieldReader, subject_lines
from factledger.application.judgement.stance import ReaderAnswer, Stance
from factledger.application.judgement.types import FieldStatement
from factledger.application.memory.ports import Embedder
from factledger.application.proposals.candidates import whole_sentence
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
STANCE_KEEP = 0.98
KEEP_RIGHT = 0.97
BARS = tuple(n / 100 for n in range(0, 96, 5))
STANCE_OF_WHY = {
    "negated": Stance.DENIES,
    "question": Stance.ASKS,
    "hypothetical": Stance.HYPOTHETICAL,
    "third_party": Stance.THIRD_PARTY,
    "small_talk": Stance.SMALL_TALK,
    "joke": Stance.SMALL_TALK,
}
MIN_CLASS = 25  # a stance with fewer labelled spans is not fitted (its spans are left out)
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Example:
    case_id: str
    session: int
    answer: ReaderAnswer
    label: str  # a `Stance` for the stance head, a `FIT_CLASSES` one for the answer head


def _overlaps(start: int, end: int, at: int, words: str) -> bool:
    return start < at + len(words) and at < end


def answer_label(answer: FieldAnswer, session: TrainingSession) -> str:
    for p in session.proposals:
        s = p.span
        same = s.line == answer.index and s.field == answer.field
        if same and _overlaps(answer.start, answer.end, s.start, s.text):
            return FIT_CLASSES[0]
    return FIT_CLASSES[1]


def _spoken(line: str, words: str, field: str | None) -> ReaderAnswer:
    return ReaderAnswer(whole_sentence(line, containing=(words,)), words, field or "", 0.0, False)


def stance_examples(case: TrainingCase) -> list[Example]:
    out = []
    for number, session in enumerate(case.sessions):
        for p in session.proposals:
            line = session.lines[p.span.line][1]
            stance = Stance.HEDGED if p.hedged else Stance.STATES
            out.append(Example(case.id, number, _spoken(line, p.span.text, p.span.field), stance))
        for n in session.not_proposed:
            role, line = session.lines[n.span.line]
            if role == "subject" and n.why in STANCE_OF_WHY:
                said = _spoken(line, n.span.text, n.span.field)
                out.append(Example(case.id, number, said, STANCE_OF_WHY[n.why]))
    return out


def answer_examples(reader: QaFieldReader, case: TrainingCase) -> list[Example]:
    fields = list(case.fields)
    lists = frozenset(f for f in fields if case.is_list(f))
    out = []
    for number, session in enumerate(case.sessions):
        transcript = [
            Message(Role.SUBJECT if role == "subject" else Role.AGENT, text)
            for role, text in session.lines
        ]
        found = reader.answers_sync(subject_lines(transcript), fields, lists)
        statements = [FieldStatement(a.index, a.value, a.field, a.margin) for a in found]
        answers = reader_answers(transcript, statements, lists)
        out += [
            Example(case.id, number, answer, answer_label(a, session))
            for a, answer in zip(found, answers, strict=True)
        ]
    return out


def read_corpora(
    reader: QaFieldReader, corpora: Sequence[Path], reader_trained: Sequence[Path]
) -> tuple[list[Example], list[Example]]:
    """The stance head's examples (every case) and the answer head's (unseen by the reader)."""
    stances: list[Example] = []
    answers: list[Example] = []
    trained = {p.resolve() for p in reader_trained}
    for directory in corpora:
        for case in load_training_cases([directory]).cases:
            stances += stance_examples(case)
            if directory.resolve() not in trained or kept_out(case.id):
                answers += answer_examples(reader, case)
    counts = Counter(e.label for e in stances)
    fitted = {*(s.value for s in KEEPING)} | {s for s, n in counts.items() if n >= MIN_CLASS}
    return [e for e in stances if e.label in fitted], answers


def _fold(case_id: str) -> int:
    return zlib.crc32(f"stance:{case_id}".encode()) % FOLDS


def classes_of(examples: Sequence[Example]) -> tuple[str, ...]:
    labels = {e.label for e in examples}
    return tuple(s.value for s in Stance if s.value in labels)


def out_of_fold(
    x: Matrix,
    examples: Sequence[Example],
    classes: Sequence[str],
    keeping: Sequence[str],
    others: tuple[Matrix, Sequence[Example]] | None = None,
) -> tuple[Floats, Floats]:
    """Each example's out-of-fold probability of `keeping`, and the same for `others`
    (another set of rows read by the head fitted without their case's fold)."""
    folds = np.array([_fold(e.case_id) for e in examples])
    p = np.zeros(len(examples))
    q = np.zeros(0 if others is None else len(others[1]))
    other_folds = np.array([_fold(e.case_id) for e in (others[1] if others else ())])
    for k in range(FOLDS):
        test = folds == k
        head = fit_head(x[~test], [examples[int(i)].label for i in np.flatnonzero(~test)], classes)
        p[test] = keep_p(head, x[test], keeping)
        if others is not None and (other_folds == k).any():
            q[other_folds == k] = keep_p(head, others[0][other_folds == k], keeping)
    return p, q


def proposed(examples: Sequence[Example], kept: npt.NDArray[np.bool_]) -> list[int]:
    """The answers the product would propose among the kept ones."""
    groups: dict[tuple[str, int, str], list[int]] = defaultdict(list)
    for i, e in enumerate(examples):
        if kept[i]:
            groups[(e.case_id, e.session, e.answer.field)].append(i)
    out: list[int] = []
    for rows in groups.values():
        many = examples[rows[0]].answer.many
        out += rows if many else [max(rows, key=lambda i: examples[i].answer.margin)]
    return out


def answer_bar_figures(
    answers: Sequence[Example], states: Floats, stance_bar: float, field: Floats
) -> dict[float, dict[str, float]]:
    right = np.array([e.label == FIT_CLASSES[0] for e in answers])
    everything = proposed(answers, np.ones(len(answers), dtype=bool))
    base = max(int(right[everything].sum()), 1)
    out = {}
    for bar in BARS:
        chosen = proposed(answers, (states >= stance_bar) & (field >= bar))
        out[bar] = {
            "proposed": len(chosen),
            "right kept share": round(float(right[chosen].sum() / base), 3),
            "precision": round(float(right[chosen].mean()) if chosen else 0.0, 3),
        }
    out[-1.0] = {
        "proposed": len(everything),
        "right kept share": 1.0,
        "precision": round(float(right[everything].mean()), 3),
    }
    return out


def highest(figures: dict[float, float], share: float) -> float:
    ok = [bar for bar, kept in figures.items() if kept >= share]
    return max(ok) if ok else 0.0


async def fit(
    embedder: Embedder,
    reader: QaFieldReader,
    corpora: Sequence[Path],
    reader_trained: Sequence[Path],
    out: Path,
    shares: tuple[float, float] = (STANCE_KEEP, KEEP_RIGHT),
) -> dict[str, object]:
    stances, answers = read_corpora(reader, corpora, reader_trained)
    vs = await Vectors.of(embedder, [e.answer for e in stances])
    va = await Vectors.of(embedder, [e.answer for e in answers])
    xs, xa_stance = (
        stance_features(vs, [e.answer for e in stances]),
        stance_features(va, [e.answer for e in answers]),
    )
    xa = answer_features(va, [e.answer for e in answers])
    classes = classes_of(stances)
    keeping = [s.value for s in KEEPING]
    ps, pa_stance = out_of_fold(xs, stances, classes, keeping, (xa_stance, answers))
    stating = np.array([e.label in keeping for e in stances])
    stance_figures = {b: float((ps[stating] >= b).mean()) for b in BARS}
    stance_bar = highest(stance_figures, shares[0])
    field, _ = out_of_fold(xa, answers, FIT_CLASSES, FIT_CLASSES[:1])
    figures = answer_bar_figures(answers, pa_stance, stance_bar, field)
    answer_bar = highest(
        {b: f["right kept share"] for b, f in figures.items() if b >= 0}, shares[1]
    )
    heads = StanceHeads(
        fit_head(xs, [e.label for e in stances], classes),
        fit_head(xa, [e.label for e in answers], FIT_CLASSES),
        embedder.model_id,
        stance_bar,
        answer_bar,
    )
    sha = heads.save(out)
    held = {
        s: round(float((ps[[e.label == s for e in stances]] < stance_bar).mean()), 3)
        for s in classes
    }
    return {
        "stance spans": dict(Counter(e.label for e in stances)),
        "reader answers": dict(Counter(e.label for e in answers)),
        "stance bar": stance_bar,
        "stance: share of each class's spans dropped at the bar, out of fold": held,
        "answer bar": answer_bar,
        "proposed answers, out of fold, by answer bar (-1: no heads)": {
            str(b): f for b, f in figures.items()
        },
        "out": str(out),
        "sha256": sha,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.stance")
    parser.add_argument("--corpus", type=Path, action="append", default=None)
    parser.add_argument("--reader-trained", type=Path, action="append", default=None)
    parser.add_argument("--out", type=Path, default=PACKAGED_ANSWER_STANCE)
    parser.add_argument(
        "--stance-keep",
        type=float,
        default=STANCE_KEEP,
        help="the share of labelled proposals the stance bar keeps, out of fold",
    )
    parser.add_argument(
        "--keep-right",
        type=float,
        default=KEEP_RIGHT,
        help="the share of right proposed answers the answer bar keeps, out of fold",
    )
    args = parser.parse_args(argv)
    corpora = args.corpus or list(CORPORA)
    trained = args.reader_trained if args.reader_trained is not None else list(READER_TRAINED)
    embedder = LearnedJudge.packaged().embedder
    report = asyncio.run(
        fit(
            embedder,
            QaFieldReader.packaged(),
            corpora,
            trained,
            args.out,
            (args.stance_keep, args.keep_right),
        )
    )
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
