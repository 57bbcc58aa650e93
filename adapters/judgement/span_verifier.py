"""`SpanVerifier`: whether the QA reader's answer is a right one, read by a cross-encoder that
sees the span in its line (ADR 0239).

The value-fit head's five numbers read a span's words against its field's labelled values and
the reader's margin; they never read the sentence around the span. "My father smoked forty a
day" holds a smoking status's words, and "Same as last year" an answer to the agent's
question about a budget. The verifier reads what the reader read: the field's words and the
agent's line before the subject's (its end: the question is there), then the subject's line
with the span in brackets (`verifier_pair`). Its file is all-MiniLM-L6-v2 fine-tuned as a
cross-encoder (`python -m factledger.bench.judgement.span_verifier --save DIR`), int8, in the
answer classes' order; its first class is a right answer. Each pair runs alone: an int8 graph
quantises a run's activations over everything in it (ADR 0155), and an answer must read the
same whatever is read beside it.

A value-fit file names its verifier's graph, a file beside it, and pins its SHA-256
(`PinnedVerifier`): a start only checks that the file is there, and the graph is read,
checked and built on a thread of its own when the first reading asks for it (`DeferredLoad`),
so a 23 MB graph never delays readiness. Not in the wave of loads that starts once a process
is ready: building the graph imports the ONNX library, which holds the interpreter's lock for
about a second, and a served process's requests waited that long behind it (ADR 0245; the
QA reader, which reads before the verifier, builds its graph on first use too). A worker,
which serves no request, builds both before its first item (`first_use`, ADR 0246). The first
reading waits for the load or, where it cannot load, gets `ModelUnavailableError` (the sync
holds the item and tries again).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from factledger.adapters.deferred_load import DeferredLoad
from factledger.adapters.embedding.onnx.model_files import TOKENIZER, TOKENIZER_SHA256
from factledger.adapters.first_use import built_at_first_use
from factledger.adapters.judgement.cross_answers import (
    CLASSES,
    CrossAnswerJudge,
    CrossEncoderIntegrityError,
    metadata_of,
    verified_bytes,
)

AGENT_CHARS = 200  # the end of a long agent line: its question is there
SPAN_VERIFIER_FILE = "span-verifier-int8.onnx"


def verifier_pair(name: str, span: str, line: str, agent: str) -> tuple[str, str]:
    """What the verifier reads: the field's words and the agent's line; the subject's line with
    the span in brackets (after it, when the line does not hold it as read)."""
    words = name.replace("_", " ")
    first = f"{words} | {agent[-AGENT_CHARS:]}" if agent else words
    at = line.find(span)
    if at < 0:
        return first, f"{line} [{span}]"
    return first, f"{line[:at]}[{span}]{line[at + len(span) :]}"


@dataclass(frozen=True, slots=True)
class SpanVerifier:
    """Reads (field and agent line, bracketed subject line) pairs with a cross-encoder's graph
    (`graph`: the answer judge's reader of pairs, whose own threshold is never read here)."""

    graph: CrossAnswerJudge

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> SpanVerifier:
        return cls.of(verified_bytes(path, sha256))

    @classmethod
    def of(cls, raw: bytes) -> SpanVerifier:
        """The verifier in the serialized graph `raw`, once it names its outputs."""
        verified_bytes(TOKENIZER, TOKENIZER_SHA256)
        if tuple(metadata_of(raw).get("classes", "").split(",")) != CLASSES:
            raise CrossEncoderIntegrityError("the span verifier's graph does not name its outputs")
        model_id = f"verifier:{hashlib.sha256(raw).hexdigest()[:12]}"
        return cls(CrossAnswerJudge(raw, yes_min=0.5, model_id=model_id))

    def yes_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        """Each pair's probability of a right answer, each pair read alone."""
        return np.array(
            [float(self.graph.probabilities_sync([pair])[0][0]) for pair in pairs],
            dtype=np.float64,
        )

    def log_odds_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        """Each pair's log-odds of a right answer (`log_odds`)."""
        return log_odds(self.yes_sync(pairs))


class PinnedVerifier:
    """The verifier in the graph file at `path`, pinned by `sha256`, loaded by its first
    reading, which waits for it and gets its error."""

    def __init__(self, path: Path, sha256: str) -> None:
        if not path.is_file():
            raise CrossEncoderIntegrityError(f"the span verifier's graph {path.name} is missing")
        self.path, self.sha256 = path, sha256
        # Not `DeferredLoad.pending`: see the module's docstring.
        self._loading: DeferredLoad[SpanVerifier] = DeferredLoad(self._load, name="span_verifier")
        built_at_first_use(self._loading.result, "span_verifier")

    def _load(self) -> SpanVerifier:
        verifier = SpanVerifier.load(self.path, self.sha256)
        verifier.yes_sync([("warm up", "[warm up]")])  # the graph built before the first answer
        return verifier

    def log_odds_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float64]:
        return self._loading.result().log_odds_sync(pairs)


CLIP = 1e-4  # a sure reading is no surer than this either side
LOG_ODDS_BOUND = math.log((1 - CLIP) / CLIP)  # the most a verifier's log-odds may say, either way


def log_odds(yes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The log-odds of probabilities, clipped at `CLIP` either side (what the value-fit head
    reads: within `LOG_ODDS_BOUND` of even)."""
    p = np.clip(yes, CLIP, 1 - CLIP)
    out: npt.NDArray[np.float64] = np.log(p / (1 - p))
    return out
