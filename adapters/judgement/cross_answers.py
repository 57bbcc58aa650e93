"""`CrossAnswerJudge`: whether a reply is a yes, a no or neither to the question it answers,
read by one fine-tuned cross-encoder that sees both at once.

The pair is one input, `[CLS] question [SEP] reply [SEP]`, tokenized by the uncased WordPiece
tokenizer the product already ships (`TOKENIZER`, its SHA-256 pinned), so every layer reads
the reply's words beside the question's. No model ships (ADR 0087: the one trained on the
project's pairs read fewer held-out yeses than the shipped pair head): a deployment trains
its own from its labelled replies and names it, pinned, in the answer-head setting (a `.onnx`
path); its SHA-256 is checked before onnxruntime reads a byte of it. The file carries,
in its metadata, the smallest probability of a yes that confirms (`yes_min`, chosen on pairs
the model never trained on so that no pair that is not a yes reads as one) and the order of
its three outputs. `python -m factledger.bench.judgement cross --out DIR` trains it (README,
"Sentence judgement: refitting from your own data").
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from factledger.adapters.embedding.onnx.model_files import TOKENIZER, TOKENIZER_SHA256
from factledger.adapters.first_use import built_at_first_use
from factledger.adapters.judgement.onnx_graph import (
    LoadedGraph,
    one_thread_session,
    prepared_graph,
)
from factledger.adapters.pinned_files import read_pinned
from factledger.application.judgement.types import Reply

if TYPE_CHECKING:
    # Imported where a model is read: a start to ready leaves the model runtime to after
    # ready (ADR 0090).
    from tokenizers import Tokenizer

MAX_TOKENS = 128  # question and reply together; the longest training pair has far fewer
CLASSES = (Reply.YES.value, Reply.NO.value, Reply.NEITHER.value)

Ids = npt.NDArray[np.int64]


class CrossEncoderIntegrityError(RuntimeError):
    """The cross-encoder's file or tokenizer is missing, differs from its pinned SHA-256, or
    does not say what it outputs."""


def verified_bytes(path: Path, sha256: str | None) -> bytes:
    """The file's bytes once their SHA-256 is the pinned one (None: a caller's own file, read
    as it is)."""
    return read_pinned(path, sha256, CrossEncoderIntegrityError, "answer model file")


def pair_tokenizer(tokenizer_json: bytes) -> Tokenizer:
    """The shipped tokenizer, truncating a pair at `MAX_TOKENS` and padding to the batch's
    longest (the lab trains on the same inputs)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token, not a secret
    return tokenizer


def pair_inputs(tokenizer: Tokenizer, pairs: Sequence[tuple[str, str]]) -> tuple[Ids, Ids, Ids]:
    """Token ids, attention mask and segment ids of `[CLS] question [SEP] reply [SEP]`."""
    encodings = tokenizer.encode_batch([(q, r) for q, r in pairs])
    return (
        np.array([e.ids for e in encodings], dtype=np.int64),
        np.array([e.attention_mask for e in encodings], dtype=np.int64),
        np.array([e.type_ids for e in encodings], dtype=np.int64),
    )


def decide(p: npt.NDArray[np.float32], yes_min: float) -> list[Reply]:
    """A yes only when it is the likeliest reading and at least `yes_min` sure; an unsure
    likeliest yes is neither (read as a no it would decline what was most likely confirmed)."""
    out = []
    for yes, no, neither in p:
        if yes >= max(no, neither):
            out.append(Reply.YES if yes >= yes_min else Reply.NEITHER)
        else:
            out.append(Reply.NO if no >= neither else Reply.NEITHER)
    return out


@dataclass(slots=True, weakref_slot=True)
class CrossAnswerJudge:
    """Reads (question, reply) pairs with the cross-encoder in `model` (its SHA-256 checked
    at construction, before anything parses it). The graph is built on first use, in a worker
    thread, so a start pays only for the check."""

    model: bytes
    yes_min: float
    model_id: str
    _loaded: LoadedGraph | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        built_at_first_use(self._ready, self.model_id)

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> CrossAnswerJudge:
        raw = verified_bytes(path, sha256)
        verified_bytes(TOKENIZER, TOKENIZER_SHA256)
        meta = metadata_of(raw)
        if tuple(meta.get("classes", "").split(",")) != CLASSES or "yes_min" not in meta:
            raise CrossEncoderIntegrityError(f"{path.name} does not name its outputs and yes_min")
        return cls(raw, float(meta["yes_min"]), f"cross:{hashlib.sha256(raw).hexdigest()[:12]}")

    def _ready(self) -> LoadedGraph:
        with self._lock:
            if self._loaded is None:
                session = one_thread_session(self.model)
                tokenizer = pair_tokenizer(verified_bytes(TOKENIZER, TOKENIZER_SHA256))
                self._loaded = LoadedGraph(session, tokenizer)
            return self._loaded

    def probabilities_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        """Each pair's probabilities, in the order yes, no, neither."""
        loaded = self._ready()
        ids, mask, types = pair_inputs(loaded.tokenizer, pairs)
        out = loaded.session.run(None, {"ids": ids, "mask": mask, "types": types})[0]
        return np.asarray(out, dtype=np.float32)

    def answers_sync(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        return decide(self.probabilities_sync(pairs), self.yes_min) if pairs else []

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        """A yes only when the model is sure enough of it (`yes_min`): a false yes records a
        fact the subject did not confirm, a missed one only leaves it pending."""
        if not pairs:
            return []
        return await asyncio.to_thread(self.answers_sync, pairs)


def metadata_of(raw: bytes) -> dict[str, str]:
    """The model's metadata (`yes_min`, `classes`), read without building a session: kept
    with its prepared graph (`prepared_graph`), which its session is then built from."""
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

    try:
        return dict(prepared_graph(raw).metadata)
    except DecodeError as exc:
        raise CrossEncoderIntegrityError("the answer model file is not an ONNX model") from exc
