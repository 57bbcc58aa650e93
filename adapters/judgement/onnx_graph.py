"""An onnxruntime session for a judgement model, as the judges run them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer


@dataclass(slots=True)
class LoadedGraph:
    """A judge's graph once built, with the tokenizer that makes its inputs."""

    session: ort.InferenceSession
    tokenizer: Tokenizer


def one_thread_session(model: bytes) -> ort.InferenceSession:
    """A CPU session on the serialized graph `model`, on one thread: a judge runs inside the
    sync worker beside the embedder, and more threads only contend for the same cores.
    Imported here, at first use: a start to ready leaves the model runtime to after ready."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
