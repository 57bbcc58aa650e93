"""`LearnedTentativeReader`: whether a quoted sentence is tentative, by the judgement heads'
hedge head (the domain's `TentativeReader`, for the ledger's hedge rule).

The ledger's commands run in a worker thread and are synchronous, so the reader embeds with
the packaged embedder's synchronous call. Its bar is the judge's own flag bar, so a sentence
the learned extractor reads as plain is not refused here as tentative: the product's own
proposals would be dropped. A lower bar (0.25) caught every tentative sentence of the labelled
hedge set's development half (`tests/data/hedge_set.yaml`) but read plain statements such as
"Our budget is 40k a year." (0.45) as tentative, and refused the product's own proposals in
the end-to-end tests.
"""

from __future__ import annotations

import threading

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.judgement.features import features
from factledger.adapters.judgement.judge import FLAG_MIN, LearnedJudge

TENTATIVE_MIN = FLAG_MIN  # the hedge head's probability from which a sentence is tentative
CACHED_SENTENCES = 1024  # one session's review quotes the same sentences many times


class LearnedTentativeReader:
    """Implements `domain.hedges.TentativeReader` over a `LearnedJudge`'s hedge head."""

    def __init__(self, judge: LearnedJudge, min_probability: float = TENTATIVE_MIN) -> None:
        if not isinstance(judge.embedder, OnnxEmbedder):
            raise TypeError("the tentative reader needs the packaged embedder's synchronous call")
        self._embedder: OnnxEmbedder = judge.embedder
        self._heads = judge.heads
        self.min_probability = min_probability
        self._seen: dict[str, bool] = {}
        self._lock = threading.Lock()  # the ledger's commands run in several threads

    def probability(self, sentence: str) -> float:
        """The hedge head's probability that `sentence` is tentative."""
        x = features(self._embedder.embed_sync([sentence]), [sentence], self._heads.buckets)
        head = self._heads["hedged"]
        return float(head.probabilities(x)[0, head.column("true")])

    def __call__(self, sentence: str) -> bool:
        with self._lock:
            known = self._seen.get(sentence)
        if known is not None:
            return known
        tentative = self.probability(sentence) >= self.min_probability
        with self._lock:
            if len(self._seen) >= CACHED_SENTENCES:
                self._seen.pop(next(iter(self._seen)))
            self._seen[sentence] = tentative
        return tentative
