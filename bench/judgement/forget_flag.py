"""The forget flag refitted alone and set into a heads file whose other heads stay as they are.

The whole train command refits every head at once, and a refit moves the hedge and field
heads with the forget flag (ADR 0116 kept the shipped file for that reason). Refitting only
the flag, on every labelled sentence and training conversation, lets the requests to forget
learn from new data while what the other heads read stays fixed (ADR 0135). Writers' labelled
messages (`bench.evalsets.forget_lines`) add their sentences, cut as the product cuts them: the
sentence that asks a request to forget, every other one not (ADR 0165).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from factledger.adapters.judgement.heads import Heads
from factledger.application.memory.ports import Embedder
from factledger.bench.evalsets.forget_lines import ForgetLine, load_lines, request_pieces
from factledger.bench.judgement.conversations import Loaded, labelled
from factledger.bench.judgement.corpus import Corpus, Sentence
from factledger.bench.judgement.fit import fit_head
from factledger.bench.judgement.train import BOOL, FORGET_FOLDS, features_of, flag_threshold


async def with_refit_forget_flag(embedder: Embedder, corpus: Corpus, onto: Heads) -> Heads:
    """`onto` with its forget flag and `forget_min` fitted on `corpus`; every other head and
    threshold as in `onto`."""
    if embedder.model_id != onto.model_id:
        raise ValueError("the heads file was trained over another embedder model")
    x = await features_of(embedder, [s.text for s in corpus.sentences], onto.buckets)
    labels = [str(s.forget).lower() for s in corpus.sentences]
    forget_min, scores = flag_threshold(x, labels)
    FORGET_FOLDS.update(scores)
    return replace(
        onto,
        heads={**onto.heads, "forget": fit_head(x, labels, BOOL)},
        forget_min=forget_min,
    )


def sentences_of_lines(lines: Sequence[ForgetLine]) -> Corpus:
    """Each message's sentences as forget-flag examples. Only the flag reads them: the other
    labels are the corpus's defaults, not the writer's (who labelled requests alone)."""
    return Corpus(
        tuple(
            Sentence(piece, "self", False, asks, False)
            for line in lines
            for piece, asks in request_pieces(line)
        ),
        (),
    )


def forget_sentences(corpora: Sequence[Path], lines: Sequence[Path]) -> tuple[Corpus, Loaded, int]:
    """What the forget flag (and the reader beside it) learn from: the corpora's labelled
    sentences and conversations (`labelled`) and the writers' lines under `lines`; with the
    conversations and how many sentences the lines gave."""
    corpus, loaded = labelled(corpora)
    written = sentences_of_lines(load_lines(lines)) if lines else Corpus((), ())
    return corpus + written, loaded, len(written.sentences)
