"""Per-token hidden states of a text, read in the context of the text before it.

A span tagger needs each word's state, not the sentence's pooled vector. The text is encoded
as the second of a pair (the agent's question first, when there is one), so its tokens' states
carry the question's context; only the text's own tokens are returned, with the character
offsets in the text that each covers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    # Types only: importing the session's module imports onnxruntime, which a start to ready
    # leaves to the model's load.
    from tokenizers import Tokenizer

    from factledger.adapters.embedding.onnx.session import EncoderSession


@dataclass(frozen=True, slots=True)
class TokenStates:
    """`states`: tokens x dimension, each L2-normalised; `offsets`: tokens x 2, the
    [start, end) characters of the text each token covers; `words`: the word each token
    belongs to (word pieces of one word share it)."""

    states: npt.NDArray[np.float32]
    offsets: npt.NDArray[np.int64]
    words: npt.NDArray[np.int64]


def token_states(
    encoder: EncoderSession, tokenizer: Tokenizer, text: str, context: str | None
) -> TokenStates:
    """One run of `encoder` over (`context`, `text`), or `text` alone."""
    encoding = tokenizer.encode(context, text) if context else tokenizer.encode(text)
    ids = np.array([encoding.ids], dtype=np.int64)
    mask = np.array([encoding.attention_mask], dtype=np.int64)
    hidden = encoder.hidden_states(ids, mask)[0]
    wanted = 1 if context else 0
    keep = [
        i
        for i, (sequence, word) in enumerate(
            zip(encoding.sequence_ids, encoding.word_ids, strict=True)
        )
        if sequence == wanted and word is not None
    ]
    states = hidden[keep].astype(np.float32)
    states /= np.maximum(np.linalg.norm(states, axis=1, keepdims=True), 1e-12)
    offsets = np.array([encoding.offsets[i] for i in keep], dtype=np.int64).reshape(-1, 2)
    words = np.array([encoding.word_ids[i] for i in keep], dtype=np.int64)
    return TokenStates(states, offsets, words)
