"""Fits the secret head (`adapters/judgement/secrets.py`, ADR 0185) over the packaged
multilingual encoder and hashed character n-grams: a writer's labelled messages
(`lines-*.yaml`, `{id, lang, text, secret, kind}`, the secret sets' format:
`bench/judgement/data/secret-lines` by default), each whole message one example; given
`conversations` (writers' labelled conversations, `cases-*.yaml`), every subject line of them
as a message that discloses none, as the instruction head learns them (ADR 0161): a
customer's ordinary lines, which the secret sets' hard negatives (order numbers, a PIN to
reset) do not cover. Messages whose text is also in an evaluation set named by `leave_out`
are left out, so that no set the head is scored on trains it. Prints the cross-validated
figures at the screen's bar and the file's SHA-256 to pin. Training data only: the head is
scored on sets written by someone who never saw these files (`bench/evalsets/secrets1`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from factledger.adapters.judgement.features import features
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.secrets import HEAD
from factledger.application.memory.ports import Embedder
from factledger.application.sessions.secret_screen import SECRET_MIN
from factledger.bench.evalsets.secret_lines import load_lines
from factledger.bench.judgement.fit import fit_head
from factledger.bench.judgement.instructions import conversation_lines
from factledger.bench.judgement.train import BOOL, BUCKETS, YES_MIN

PACKAGED_SECRET_LINES = Path(__file__).parent / "data" / "secret-lines"
# Chosen on the dev halves (ADR 0185): a weak penalty; the bar, not the penalty, trades
# catches for false alarms.
SECRET_L2 = 1e-5
BATCH = 256
FOLDS = 5


def training_lines(
    corpora: Sequence[Path], leave_out: Sequence[Path] = ()
) -> tuple[list[str], list[str], int]:
    """(texts, "true"/"false" labels, how many were left out) of the corpora's messages, those
    whose text an evaluation set under `leave_out` also holds left out."""
    held = {line.text.strip() for line in load_lines(leave_out)} if leave_out else set()
    lines = load_lines(corpora)
    kept = [line for line in lines if line.text.strip() not in held]
    return (
        [line.text for line in kept],
        ["true" if line.secret else "false" for line in kept],
        len(lines) - len(kept),
    )


def out_of_fold_figures(x: np.ndarray, y: Sequence[str], l2: float = SECRET_L2) -> dict[str, float]:
    """Precision and recall of "true" at the screen's bar, each message read by a head fitted
    without its fold (folds by position, the corpus's files interleaved)."""
    labels = np.array(y) == "true"
    p = np.zeros(len(y), dtype=np.float32)
    folds = np.arange(len(y)) % FOLDS
    for fold in range(FOLDS):
        test = folds == fold
        head = fit_head(x[~test], list(np.array(y)[~test]), BOOL, l2)
        p[test] = head.probabilities(x[test])[:, head.column("true")]
    said = p >= SECRET_MIN
    caught = float((said & labels).sum())
    return {
        "precision": caught / max(float(said.sum()), 1.0),
        "recall": caught / max(float(labels.sum()), 1.0),
        "false_alarm_rate": float((said & ~labels).sum()) / max(float((~labels).sum()), 1.0),
        "messages": float(len(labels)),
        "secrets": float(labels.sum()),
    }


async def train_secret_head(
    embedder: Embedder,
    corpora: Sequence[Path],
    out: Path,
    leave_out: Sequence[Path] = (),
    conversations: Sequence[Path] = (),
    *,
    as_pieces: bool = False,
    values: Sequence[Path] = (),
    l2: float | None = None,
) -> dict[str, object]:
    """Fits the head; with `as_pieces`, the conversations' lines split into the pieces the
    screen reads (`pieces_of`). With `values` (labelled proposal values, `lines-*.yaml` of
    `{id, lang, field, text, secret, kind}`), a head for proposals' values (ADR 0188): those
    values, each read as "field name: value", train it too (those whose value an evaluation
    set under `leave_out` holds left out)."""
    texts, labels, left_out = training_lines(corpora, leave_out)
    said = conversation_lines(conversations, as_pieces=as_pieces)
    texts, labels = texts + said, labels + ["false"] * len(said)
    if values:
        from factledger.bench.evalsets.secret_values import load_values

        held = {line.text.strip() for line in load_lines(leave_out)} if leave_out else set()
        kept = [v for v in load_values(values) if v.text.strip() not in held]
        left_out += len(load_values(values)) - len(kept)
        read = [v.as_read(with_field=True) for v in kept]
        texts += [r.text for r in read]
        labels += ["true" if r.secret else "false" for r in read]
    x = np.vstack(
        [
            features(await embedder.embed(texts[i : i + BATCH]), texts[i : i + BATCH], BUCKETS)
            for i in range(0, len(texts), BATCH)
        ]
    )
    l2 = SECRET_L2 if l2 is None else l2
    head = fit_head(x, labels, BOOL, l2)
    heads = Heads({HEAD: head}, embedder.model_id, BUCKETS, YES_MIN)
    return {
        "messages": len(texts),
        "conversation_lines": len(said),
        "left_out": left_out,
        "cross_validated": out_of_fold_figures(x, labels, l2),
        "out": str(out),
        "sha256": heads.save(out),
    }
