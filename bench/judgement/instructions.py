"""Fits the instruction head (`adapters/judgement/instructions.py`) over the packaged embedder:
`instructions.yaml` (lines that instruct the agent, and lines that only sound like it),
`lines-aimed-at-ai-*.yaml` (a writer's lines of both kinds, one labelled line per item),
every sentence of `sentences.yaml` as a line that does not, and, given `conversations`
(writers' labelled conversations, `cases-*.yaml`), every subject line of them as one that does
not either: a customer's whole message, requests to forget addressed to the product's memory
among them, which the head had never seen (ADR 0161). Prints the cross-validated figures
at the shipped threshold and the file's SHA-256 to pin. Training data only: the head is scored
on a set written by someone who never saw these files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

from factledger.adapters.judgement.features import Matrix, features
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.instructions import (
    HEAD,
    BothEncodersInstructionDetector,
    Weighing,
    log_odds,
    pieces_of,
)
from factledger.application.memory.ports import Embedder
from factledger.application.sessions.instruction_screen import INSTRUCTION_MIN
from factledger.bench.judgement.corpus import load_corpus
from factledger.bench.judgement.fit import fit_head
from factledger.bench.judgement.train import BOOL, BUCKETS, YES_MIN

FOLDS = 5


def load_lines(directory: Path) -> tuple[list[str], list[str]]:
    """(texts, "true"/"false" labels) of a corpus directory."""
    texts, labels = [], []
    for group in yaml.safe_load((directory / "instructions.yaml").read_text(encoding="utf-8")):
        label = "true" if group["instruction"] else "false"
        texts += [str(t) for t in group["texts"]]
        labels += [label] * len(group["texts"])
    for path in sorted(directory.glob("lines-aimed-at-ai-*.yaml")):
        for line in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            texts.append(str(line["text"]))
            labels.append("true" if line["instruction"] else "false")
    for sentence in load_corpus(directory).sentences:
        texts.append(sentence.text)
        labels.append("false")
    return texts, labels


def conversation_lines(directories: Sequence[Path], *, as_pieces: bool = False) -> list[str]:
    """The subject lines of the labelled conversations under `directories`, once each; with
    `as_pieces`, their pieces as the screen judges them (`pieces_of`), once each (ADR 0161's
    candidate five)."""
    said: dict[str, None] = {}
    for directory in directories:
        for path in sorted(directory.rglob("cases-*.yaml")):
            for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                for session in case["sessions"]:
                    for line in session["lines"]:
                        if line["role"] != "subject":
                            continue
                        text = str(line["text"])
                        said.update(dict.fromkeys(pieces_of(text) if as_pieces else [text]))
    return list(said)


async def _x(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    return features(await embedder.embed(list(texts)), texts, BUCKETS)


def out_of_fold_margins(x: Matrix, y: Sequence[str], folds: np.ndarray | None = None) -> np.ndarray:
    """Each line's margin (the "true" logit less the "false" one) read by a head fitted
    without its fold (`folds`: each line's; every fifth line by default)."""
    margins = np.zeros(len(y), dtype=np.float32)
    folds = np.arange(len(y)) % FOLDS if folds is None else folds
    for fold in range(FOLDS):
        test = folds == fold
        head = fit_head(x[~test], list(np.array(y)[~test]), BOOL)
        logits = x[test] @ head.weights + head.bias
        margins[test] = logits[:, 1] - logits[:, 0]
    return margins


def figures(margins: np.ndarray, y: Sequence[str], shift: float = 0.0) -> dict[str, float]:
    """Precision and recall of "true" at `INSTRUCTION_MIN`, the margins lowered by `shift`."""
    labels = np.array(y) == "true"
    said = margins - shift >= THRESHOLD_MARGIN
    tp = float((said & labels).sum())
    return {
        "precision": tp / max(float(said.sum()), 1.0),
        "recall": tp / max(float(labels.sum()), 1.0),
        "lines": float(len(labels)),
        "instructions": float(labels.sum()),
    }


def shift_for(margins: np.ndarray, rate: float) -> float:
    """How far to lower the "true" bias so that at most `rate` of these (out-of-fold) margins
    stay at or above the threshold's (ADR 0161's candidate two)."""
    if not len(margins):
        return 0.0
    allowed = int(np.floor(rate * len(margins)))
    ordered = np.sort(margins)[::-1]
    if allowed >= len(ordered):
        return 0.0
    # The first margin that must fall below the threshold's, just below it.
    return max(0.0, float(ordered[allowed]) - THRESHOLD_MARGIN + 1e-4)


THRESHOLD_MARGIN = float(np.log(INSTRUCTION_MIN / (1 - INSTRUCTION_MIN)))


async def train_instruction_head(
    embedder: Embedder,
    directory: Path,
    out: Path,
    conversations: Sequence[Path] = (),
    withhold_at_most: float | None = None,
    *,
    as_pieces: bool = False,
) -> dict[str, object]:
    """Fits the head; with `withhold_at_most`, its bias lowered until at most that share of
    the conversations' subject lines reads as an instruction out of fold (ADR 0161)."""
    texts, labels = load_lines(directory)
    said = conversation_lines(conversations, as_pieces=as_pieces)
    texts, labels = texts + said, labels + ["false"] * len(said)
    x = await _x(embedder, texts)
    margins = out_of_fold_margins(x, labels)
    shift = 0.0
    if withhold_at_most is not None:
        shift = shift_for(margins[len(texts) - len(said) :], withhold_at_most)
    head = fit_head(x, labels, BOOL)
    head.bias[head.column("true")] -= shift
    heads = Heads({HEAD: head}, embedder.model_id, BUCKETS, YES_MIN)
    return {
        "cross_validated": figures(margins, labels, shift),
        "shift": shift,
        "out": str(out),
        "sha256": heads.save(out),
    }


async def fit_weighing(
    english: Embedder,
    multilingual: Embedder,
    directory: Path,
    conversations: Sequence[Path],
    screen: BothEncodersInstructionDetector,
) -> dict[str, object]:
    """ADR 0204's weighing of the two heads' log-odds: each training line's log-odds read out of
    fold by a head over each encoder (five folds of contiguous lines, which keeps a writer's
    pairs of an instruction and its look-alike together), a logistic weighing of the two
    fitted on them with the classes weighed equally (ADR 0203), then its bias lowered until
    `screen`'s heads, so weighed, withhold no more of the `conversations`' subject lines than
    they do averaged. Prints the three numbers to ship."""
    texts, labels = load_lines(directory)
    folds = (np.arange(len(texts)) * FOLDS) // max(len(texts), 1)
    margins = [
        out_of_fold_margins(await _x(embedder, texts), labels, folds)
        for embedder in (english, multilingual)
    ]
    head = fit_head(np.stack(margins, axis=1), labels, BOOL)
    true, false = head.column("true"), head.column("false")
    weights = head.weights[:, true] - head.weights[:, false]
    fitted = Weighing(
        float(weights[0]), float(weights[1]), float(head.bias[true] - head.bias[false])
    )
    said = conversation_lines(conversations)
    averaged = await replace(screen, weighing=None).instruction_p(said)
    allowed = sum(p >= INSTRUCTION_MIN for p in averaged)
    weighed = np.array(await replace(screen, weighing=fitted).instruction_p(said))
    # Half a line over the count, so that the share's rounding keeps exactly `allowed`.
    shift = shift_for(log_odds(weighed), (allowed + 0.5) / max(len(said), 1))
    return {
        "english": round(fitted.english, 4),
        "multilingual": round(fitted.multilingual, 4),
        "bias": round(fitted.bias - shift, 4),
        "bias_fitted": round(fitted.bias, 4),
        "lines": len(texts),
        "conversation_lines": len(said),
        "withheld_averaged": allowed,
    }
