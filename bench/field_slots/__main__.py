"""`python -m factledger.bench.field_slots train`: fits the field heads memories are slotted by.

    python -m factledger.bench.field_slots train --corpus bench/judgement/data/conversations \
        --out adapters/field_reader/data/field_heads.npz

`train-questions` fits, the same way, the question heads: which field of the subject's kind an
agent's recall query asks about, from the conversations' labelled questions (a question the
writer gave no field is "none"), every field readable, list fields included:

    python -m factledger.bench.field_slots train-questions \
        --out adapters/field_reader/data/question_heads.npz

`train-topics` fits one head for every kind: what a recall query asks about and what an
unslotted memory speaks of, over the rule extractor's slot names and the kinds of unslotted
facts, from `bench/judgement/data/asked_topics.yaml` (ADR 0098):

    python -m factledger.bench.field_slots train-topics \
        --out adapters/field_reader/data/topic_heads.npz

`fit-unasked` prints the words the labelled conversations use with many fields and almost
never in a value (`bench/field_slots/unasked.py`, ADR 0108); with `--write` it writes them to
the file memories' and queries' keywords leave them out by (ADR 0118), and prints its SHA-256
(pin it in `application/memory/unasked_words.py`):

    python -m factledger.bench.field_slots fit-unasked --write [--min-fields 30 --max-share 0.02]

Reads the labelled conversations (CASES-FORMAT), embeds their subject sentences with the
configured embedder (the default ONNX model unless FACTLEDGER_EMBEDDER__* says otherwise),
fits one head per subject kind, and chooses the probability a field must reach: the lowest
at which, out of fold (five folds by case), at least `--precision` of the sentences given a
one-valued field state that field. Prints the out-of-fold figures and the file's SHA-256
(pin it in `adapters/field_reader/head.py`, or pass it as the deployment's setting).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import httpx
import numpy as np

from factledger.adapters.field_reader.head import NONE, FieldHeads, KindHead, save_heads
from factledger.api.bootstrap.backend import build_embedder
from factledger.api.settings import load_settings
from factledger.application.memory.lexical import keywords
from factledger.bench.field_slots.corpus import (
    KindFields,
    Sample,
    load,
    load_questions,
    load_topics,
)
from factledger.bench.field_slots.fit import Matrix, fit
from factledger.bench.field_slots.unasked import (
    MAX_VALUE_SHARE,
    MIN_FIELDS,
    load_cases,
    unasked_words,
    word_spread,
    write_unasked_words,
)

FOLDS = 5
UNASKED_WORDS_FILE = Path("application/memory/data/unasked_words.json")
# A keyword is a topic's when its labelled texts say it at least this often and at least this
# share of the corpus's uses of it are theirs.
TOPIC_WORD_COUNT = 3
TOPIC_WORD_SHARE = 0.9


def topic_words(
    samples: list[Sample], count: int = TOPIC_WORD_COUNT, share: float = TOPIC_WORD_SHARE
) -> dict[str, str]:
    """Per topic, the keywords (as memories-mode search folds them) that its labelled texts
    use and other topics' seldom do: what a fact of that topic is found by."""
    by_topic: dict[str, Counter[str]] = defaultdict(Counter)
    for s in samples:
        by_topic[s.label].update(set(keywords(s.text)))
    overall: Counter[str] = Counter()
    for counts in by_topic.values():
        overall.update(counts)
    return {
        topic: " ".join(
            sorted(w for w, c in counts.items() if c >= count and c / overall[w] >= share)
        )
        for topic, counts in sorted(by_topic.items())
        if topic != NONE
    }


def _fold(case: str) -> int:
    return int(hashlib.sha256(case.encode()).hexdigest(), 16) % FOLDS


def _out_of_fold(
    vectors: Matrix, samples: list[Sample], classes: tuple[str, ...], many: frozenset[str]
) -> list[tuple[str, str, float]]:
    """(label, predicted field, its probability) for each sample, by a head that never saw
    its case."""
    folds = np.array([_fold(s.case) for s in samples])
    out: list[tuple[str, str, float]] = [("", "", 0.0)] * len(samples)
    for k in range(FOLDS):
        train, test = folds != k, folds == k
        if not test.any() or not train.any():
            continue
        head = fit(
            vectors[train],
            [s.label for s, t in zip(samples, train, strict=True) if t],
            classes,
            many,
        )
        probabilities = head.probabilities(vectors[test])
        for n, row in zip(np.flatnonzero(test), probabilities, strict=True):
            best = int(row.argmax())
            out[int(n)] = (samples[int(n)].label, classes[best], float(row[best]))
    return out


def _threshold(
    predictions: list[tuple[str, str, float]], many: set[str], precision: float
) -> float:
    for t in np.arange(0.10, 0.991, 0.01):
        read = [
            (label, field)
            for label, field, p in predictions
            if p >= t and field not in many and field != NONE
        ]
        if read and sum(label == field for label, field in read) / len(read) >= precision:
            return round(float(t), 2)
    return 0.99


def _figures(
    predictions: list[tuple[str, str, float]], many: set[str], t: float
) -> dict[str, float | int]:
    one_valued = [
        (label, f, p) for label, f, p in predictions if label != NONE and label not in many
    ]
    read = [(label, f) for label, f, p in predictions if p >= t and f != NONE and f not in many]
    right = sum(label == f for label, f in read)
    return {
        "threshold": t,
        "read": len(read),
        "precision": round(right / len(read), 3) if read else 0.0,
        "recall_of_one_valued": round(right / len(one_valued), 3) if one_valued else 0.0,
    }


async def train(
    corpus: Path,
    out: Path,
    precision: float,
    *,
    questions: bool = False,
    topics: bool = False,
    word_count: int = TOPIC_WORD_COUNT,
    word_share: float = TOPIC_WORD_SHARE,
) -> dict[str, object]:
    if topics:
        samples, kinds = load_topics(corpus)
    else:
        samples, kinds = load_questions(corpus) if questions else load(corpus)
    if questions:
        # A question may ask about a list field as well as a one-valued one: every field
        # is read.
        kinds = {k: KindFields(spec.fields, frozenset()) for k, spec in kinds.items()}
    settings = load_settings()
    async with httpx.AsyncClient() as http:
        embedder = build_embedder(settings.embedder, http)
        vectors = np.asarray(await embedder.embed([s.text for s in samples]), dtype=np.float32)
    by_kind: dict[str, list[int]] = defaultdict(list)
    for n, s in enumerate(samples):
        # A label the kind does not declare (a writer's slip) teaches nothing: left out.
        if s.kind in kinds and (s.label == NONE or s.label in kinds[s.kind].fields):
            by_kind[s.kind].append(n)
    predictions: list[tuple[str, str, float]] = []
    many: set[str] = set()
    plans: dict[str, tuple[tuple[str, ...], frozenset[str], list[int]]] = {}
    for kind, rows in sorted(by_kind.items()):
        spec = kinds[kind]
        classes = (NONE, *spec.fields)
        plans[kind] = (classes, spec.many, rows)
        many |= {f"{kind}/{f}" for f in spec.many}
        kind_samples = [samples[n] for n in rows]
        for label, field, p in _out_of_fold(vectors[rows], kind_samples, classes, spec.many):
            predictions.append(
                (f"{kind}/{label}" if label else NONE, f"{kind}/{field}" if field else NONE, p)
            )
    threshold = _threshold(predictions, many, precision)
    heads: dict[str, KindHead] = {}
    for kind, (classes, spec_many, rows) in plans.items():
        heads[kind] = fit(vectors[rows], [samples[n].label for n in rows], classes, spec_many)
    words = topic_words(samples, word_count, word_share) if topics else {}
    sha = save_heads(
        FieldHeads(embedder.model_id, embedder.dimension, threshold, heads, words), out
    )
    return {
        "samples": len(samples),
        "kinds": len(heads),
        "model_id": embedder.model_id,
        "out_of_fold": _figures(predictions, many, threshold),
        **({"words": words} if words else {}),
        "sha256": sha,
    }


def fit_unasked(corpus: Path, min_fields: int, max_share: float) -> dict[str, object]:
    """The fitted words, each with its number of fields, uses and uses in a value."""
    spread = word_spread(load_cases(corpus))
    words = unasked_words(spread, min_fields, max_share)
    return {
        "min_fields": min_fields,
        "max_share": max_share,
        "words": {
            w: {
                "fields": len(spread[w].fields),
                "uses": spread[w].uses,
                "in_value": spread[w].in_value,
            }
            for w in words
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.field_slots")
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fit the field heads on labelled conversations")
    t.add_argument("--corpus", type=Path, default=Path("bench/judgement/data/conversations"))
    t.add_argument("--out", type=Path, default=Path("adapters/field_reader/data/field_heads.npz"))
    t.add_argument("--precision", type=float, default=0.8, help="out-of-fold precision to reach")
    q = sub.add_parser(
        "train-questions", help="fit the question heads: which field a recall query asks about"
    )
    q.add_argument("--corpus", type=Path, default=Path("bench/judgement/data/conversations"))
    q.add_argument(
        "--out", type=Path, default=Path("adapters/field_reader/data/question_heads.npz")
    )
    q.add_argument("--precision", type=float, default=0.9, help="out-of-fold precision to reach")
    a = sub.add_parser(
        "train-topics",
        help="fit the asked-topic head: what a query asks about, what a memory speaks of",
    )
    a.add_argument("--corpus", type=Path, default=Path("bench/judgement/data/asked_topics.yaml"))
    a.add_argument("--out", type=Path, default=Path("adapters/field_reader/data/topic_heads.npz"))
    a.add_argument("--precision", type=float, default=0.9, help="out-of-fold precision to reach")
    a.add_argument(
        "--word-count", type=int, default=TOPIC_WORD_COUNT, help="least uses of a topic's word"
    )
    a.add_argument(
        "--word-share", type=float, default=TOPIC_WORD_SHARE, help="least share of its uses"
    )
    u = sub.add_parser(
        "fit-unasked", help="print the words that name nothing a fact holds (ADR 0108)"
    )
    u.add_argument("--corpus", type=Path, default=Path("bench/judgement/data/conversations"))
    u.add_argument("--min-fields", type=int, default=MIN_FIELDS, help="least fields a word's")
    u.add_argument(
        "--max-share", type=float, default=MAX_VALUE_SHARE, help="most share of it in values"
    )
    u.add_argument(
        "--write",
        nargs="?",
        type=Path,
        const=UNASKED_WORDS_FILE,
        default=None,
        help=f"write the words where the product reads them (default {UNASKED_WORDS_FILE})",
    )
    args = parser.parse_args(argv)
    if args.command == "fit-unasked":
        fitted = fit_unasked(args.corpus, args.min_fields, args.max_share)
        if args.write is not None:
            fitted = {**fitted, "sha256": write_unasked_words(fitted, args.write)}
        sys.stdout.write(json.dumps(fitted))
        sys.stdout.write("\n")
        return
    result = asyncio.run(
        train(
            args.corpus,
            args.out,
            args.precision,
            questions=args.command == "train-questions",
            topics=args.command == "train-topics",
            **(
                {"word_count": args.word_count, "word_share": args.word_share}
                if args.command == "train-topics"
                else {}
            ),
        )
    )
    sys.stdout.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
