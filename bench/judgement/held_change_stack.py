"""The stacked pair head (ADR 0145's second candidate): ADR 0137's pair head reads the pair,
and a head of a dozen columns reads its logit beside the reader's margin and the span's
likeness to the held words, trained on the reader's own answers under the held floor.

The reader's answers of the training cases are also sentences the pair head was fitted on, so
its logit for them is taken cross-fitted: the cases outside the kept-out hash split in four by
another part of the same hash, each quarter's logits from a pair head fitted on the other
three. The file carries the pair head fitted on all of them, as ADR 0137's command fits it.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from factledger.adapters.judgement.held_change import (
    CLASSES,
    HeldChangeHead,
    PairWidths,
    embed_held_pairs,
    stacked_features,
)
from factledger.application.memory.ports import Embedder
from factledger.bench.judgement.fit import fit_head
from factledger.bench.judgement.held_change_reads import LabelledPair

FOLDS = 4


def fold_of(case_id: str) -> int:
    """A quarter of the cases outside the kept-out hash (whose lowest three bits it reads)."""
    return (zlib.crc32(case_id.encode("utf-8")) >> 3) % FOLDS


def label(changed: bool) -> str:
    return CLASSES[0] if changed else CLASSES[1]


async def fit_stacked(
    embedder: Embedder,
    sentence_pairs: Sequence[LabelledPair],
    answers: Sequence[LabelledPair],
    widths: PairWidths,
    l2: float,
) -> HeldChangeHead:
    """The stacked head over `answers` (the reader's, with their margins), its pair head
    fitted on `sentence_pairs` (ADR 0137's examples) at ADR 0137's widths (the field's
    identity, when `widths` has field buckets, is read by the stacked head alone)."""
    pair_widths = PairWidths(widths.buckets)
    x_pairs = await embed_held_pairs(embedder, [p.pair for p in sentence_pairs], pair_widths)
    y_pairs = [label(p.changed) for p in sentence_pairs]
    x_answers = await embed_held_pairs(embedder, [p.pair for p in answers], widths)
    pair_folds = np.array([fold_of(p.case_id) for p in sentence_pairs])
    answer_folds = np.array([fold_of(p.case_id) for p in answers])
    fields = [p.pair.field for p in answers]
    stack = np.zeros(
        (len(answers), len(widths.margin_edges) + 5 + widths.field_buckets), dtype=np.float32
    )
    for f in range(FOLDS):
        inside = np.flatnonzero(pair_folds != f)
        head = fit_head(x_pairs[inside], [y_pairs[i] for i in inside], CLASSES, l2)
        rows = answer_folds == f
        picked = [name for name, r in zip(fields, rows, strict=True) if r]
        stack[rows] = stacked_features(x_answers[rows], head, widths, picked)
    stacked = fit_head(stack, [label(p.changed) for p in answers], CLASSES, l2)
    pair_head = fit_head(x_pairs, y_pairs, CLASSES, l2)
    return HeldChangeHead(embedder, stacked, widths, 0.5, 0.0, pair_head=pair_head)
