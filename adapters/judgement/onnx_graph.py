"""An onnxruntime session for a judgement model, as the judges run them.

The lab exports the judges' models (the QA reader, the forget reader, a cross-encoder) with
onnxruntime's dynamic quantization: `MatMulInteger` of uint8 activations by int8 weights. On a
CPU with VNNI onnxruntime multiplies those exactly; on one with AVX2 alone it adds pairs of
uint8 x int8 products into int16 and saturates, so the same model reads the same sentence
differently by machine (a span's end, a field read at its floor or not). Before the session is
made, each such weight moves to uint8 with its zero point raised by 128 (the same values):
uint8 x uint8 takes a widening path that is exact on both, as the embedder's does (ADR 0004).

That rewrite parses the graph with the ONNX library, whose import holds the interpreter's lock
for 0.5-1 s: a served process's requests waited behind it when its first session was read. The
rewritten graph and the model's metadata are prepared by a child process
(`adapters.compile_apart`) and kept in the graph cache (`prepared_graph`), so a served process
reads them back and never imports the library (ADR 0247).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import version as installed_version
from typing import TYPE_CHECKING, Any

import numpy as np

from factledger.adapters.embedding.onnx.graph_cache import CompiledGraph, CompiledGraphCache
from factledger.adapters.embedding.onnx.model_files import default_cache_dir

if TYPE_CHECKING:
    import onnx
    import onnxruntime as ort
    from tokenizers import Tokenizer


@dataclass(slots=True)
class LoadedGraph:
    """A judge's graph once built, with the tokenizer that makes its inputs."""

    session: ort.InferenceSession
    tokenizer: Tokenizer


# Bump whenever `prepared_in_process` writes another graph from the same model: every cached
# one then becomes stale.
PREPARATION_VERSION = 1


@dataclass(frozen=True, slots=True)
class PreparedKey:
    """What a prepared judge graph depends on: its source model and the code that rewrote it."""

    source_sha256: str
    preparation: int = PREPARATION_VERSION
    onnx_version: str = field(default_factory=lambda: installed_version("onnx"))

    @property
    def file_name(self) -> str:
        return f"{self.source_sha256}-exact-weights.graph"


def one_thread_session(model: bytes) -> ort.InferenceSession:
    """A CPU session on the serialized graph `model` (its int8 weights made exact on every CPU:
    `prepared_graph`), on one thread: a judge runs inside the sync worker beside the embedder,
    and more threads only contend for the same cores. Imported here, at first use: a start to
    ready leaves the model runtime to after ready."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    prepared = prepared_graph(model).serialized
    return ort.InferenceSession(prepared, options, providers=["CPUExecutionProvider"])


def prepared_graph(model: bytes) -> CompiledGraph:
    """`model` with its int8 weights made exact, and its metadata: read from the graph cache
    (`$XDG_CACHE_HOME/factledger/onnx`), else prepared by a child process and kept there, else
    prepared here. A model that is not a graph raises the ONNX library's `DecodeError`."""
    from factledger.adapters.compile_apart import compile_apart

    cache = CompiledGraphCache(default_cache_dir())
    key = PreparedKey(hashlib.sha256(model).hexdigest())
    graph = cache.get(key) or _UNCACHED.take(key.source_sha256)
    if graph is None:
        graph = compile_apart(model, "exact_weights") or prepared_in_process(model, {})
        if not cache.put(key, graph):
            _UNCACHED.keep(key.source_sha256, graph)
    return graph


class _LastUncached:
    """The last graph prepared where the cache could not keep it, taken by the next ask for
    the same model: a pinned verifier reads its metadata, then builds its session from the
    same file, and should not pay a second child for it. Taken once, so it holds no graph for
    the life of the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: tuple[str, CompiledGraph] | None = None

    def keep(self, sha256: str, graph: CompiledGraph) -> None:
        with self._lock:
            self._kept = (sha256, graph)

    def take(self, sha256: str) -> CompiledGraph | None:
        with self._lock:
            if self._kept is None or self._kept[0] != sha256:
                return None
            graph, self._kept = self._kept[1], None
            return graph


_UNCACHED = _LastUncached()


def prepared_in_process(model: bytes, _options: Mapping[str, Any]) -> CompiledGraph:
    """The graph of `prepared_graph`, made here (a child's preparation "exact_weights")."""
    import onnx

    graph = onnx.load_from_string(model)
    metadata = {prop.key: prop.value for prop in graph.metadata_props}
    serialized = graph.SerializeToString() if exact_integer_weights(graph) else model
    return CompiledGraph(serialized, int8_activations=False, metadata=metadata)


def exact_integer_weights(model: onnx.ModelProto) -> int:
    """Moves in place every int8 weight of a `MatMulInteger` (with its int8 zero point) to
    uint8, each value and zero point raised by 128: the products are the same, and onnxruntime
    computes them without saturating on any CPU. A constant that anything else reads (another
    operator, a node whose other constant cannot move) stays as it is. Returns how many
    constants moved."""
    from onnx import TensorProto, numpy_helper

    int8 = {t.name: t for t in model.graph.initializer if t.data_type == TensorProto.INT8}
    readers: dict[str, list[tuple[int, int]]] = {}  # name: (node, input position)
    for at, node in enumerate(model.graph.node):
        for position, name in enumerate(node.input):
            readers.setdefault(name, []).append((at, position))
    nodes = model.graph.node
    # Candidates: multiplications by an int8 constant with an int8 constant zero point; drop
    # those sharing a constant with anything but another candidate, until none is dropped.
    candidates = {
        at
        for at, node in enumerate(nodes)
        if node.op_type == "MatMulInteger"
        and len(node.input) >= 4
        and node.input[1] in int8
        and node.input[3] in int8
    }
    changed = True
    while changed:
        changed = False
        for at in list(candidates):
            weight, zero_point = nodes[at].input[1], nodes[at].input[3]
            shared_badly = any(
                reader not in candidates or position != expected
                for name, expected in ((weight, 1), (zero_point, 3))
                for reader, position in readers[name]
            )
            if shared_badly:
                candidates.discard(at)
                changed = True
    moved = {name for at in candidates for name in (nodes[at].input[1], nodes[at].input[3])}
    for name in moved:
        raised = numpy_helper.to_array(int8[name]).astype(np.int16) + 128
        int8[name].CopyFrom(numpy_helper.from_array(raised.astype(np.uint8), name))
    return len(moved)
