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
from pathlib import Path

import numpy as np
import yaml

from factledger.adapters.judgement.features import Matrix, features
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.instructions import HEAD
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


def conversation_lines(directories: Sequence[Path]) -> list[str]:
    """The subject lines of the labelled conversations under `directories`, once each."""
    said: dict[str, None] = {}
    for directory in directories:
        for path in sorted(directory.rglob("cases-*.yaml")):
            for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                for session in case["sessions"]:
                    for line in session["lines"]:
                        if line["role"] == "subject":
                            said[str(line["text"])] = None
    return list(said)


async def _x(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    return features(await embedder.embed(list(texts)), texts, BUCKETS)


def cross_validated(x: Matrix, y: Sequence[str]) -> dict[str, float]:
    """Precision and recall of "true" at `INSTRUCTION_MIN`, out of fold."""
    labels = np.array(y) == "true"
    p = np.zeros(len(labels), dtype=np.float32)
    folds = np.arange(len(labels)) % FOLDS
    for fold in range(FOLDS):
        test = folds == fold
        head = fit_head(x[~test], list(np.array(y)[~test]), BOOL)
        p[test] = head.probabilities(x[test])[:, 1]
    said = p >= INSTRUCTION_MIN
    tp = float((said & labels).sum())
    return {
        "precision": tp / max(float(said.sum()), 1.0),
        "recall": tp / max(float(labels.sum()), 1.0),
        "lines": float(len(labels)),
        "instructions": float(labels.sum()),
    }


async def train_instruction_head(
    embedder: Embedder, directory: Path, out: Path, conversations: Sequence[Path] = ()
) -> dict[str, object]:
    texts, labels = load_lines(directory)
    said = conversation_lines(conversations)
    texts, labels = texts + said, labels + ["false"] * len(said)
    x = await _x(embedder, texts)
    figures = cross_validated(x, labels)
    heads = Heads({HEAD: fit_head(x, labels, BOOL)}, embedder.model_id, BUCKETS, YES_MIN)
    return {"cross_validated": figures, "out": str(out), "sha256": heads.save(out)}
