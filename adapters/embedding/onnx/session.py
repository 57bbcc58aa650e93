"""`EncoderSession`: the fastest faithful onnxruntime session for a sentence encoder.

A BERT encoder is rebuilt as a compact graph of fused operators (`onnx_bert_graph`), with int8
activations when asked. A model we pin is known to survive the rebuild (its tests compare both
graphs); any other model must first reproduce its own hidden states, in float, on a probe
batch. A model that is not rebuilt keeps its graph, with int8 activations where its weights
are stored as int8 (`onnx_quantize`). Whichever graph is chosen can be kept on disk between
processes (`graph_cache`), so the rebuild and the probe run once per model and options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import onnxruntime as ort

from factledger.adapters.embedding.onnx.graph_cache import (
    CompiledGraph,
    CompiledGraphCache,
    GraphKey,
)
from factledger.adapters.embedding.onnx.graph_options import (
    FOLD_DEQUANTIZE,
    SLOWER_FUSIONS,
    TOKEN_TYPES,
)

if TYPE_CHECKING:
    import onnx

BERT_HEADS = 12  # MiniLM and BERT-base alike; a wrong count fails the probe, not the vectors
HIDDEN_STATES = "last_hidden_state"
_PROBE_IDS = np.array([[101, 2023, 2003, 1037, 4606, 102], [101, 7592, 102, 0, 0, 0]], np.int64)


@dataclass(frozen=True, slots=True)
class EncoderSession:
    """A loaded encoder: token ids and mask in, one hidden state per token out."""

    session: ort.InferenceSession
    input_names: frozenset[str]
    output_name: str
    int8_activations: bool

    def hidden_states(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": ids, "attention_mask": mask}
        if TOKEN_TYPES in self.input_names:
            feeds[TOKEN_TYPES] = np.zeros_like(ids)
        hidden: np.ndarray = self.session.run([self.output_name], feeds)[0]
        return hidden


def open_encoder(
    read_model: Callable[[], bytes],
    *,
    source_sha256: str,
    threads: int,
    int8_activations: bool,
    trusted: bool,
    cache: CompiledGraphCache | None = None,
    compile_apart: bool = False,
) -> EncoderSession:
    """`read_model` gives the model file's verified content, `source_sha256` its sha256; it is
    called only when the graph must be compiled (a `cache` that holds the graph for this model
    and these options spares reading it). `trusted`: a model whose rebuild our tests check, so
    the probe is skipped. `compile_apart`: a graph to compile is compiled by a child process
    (`adapters.compile_apart`), and in this one only when the child cannot give it; a load that
    runs beside served requests asks for it."""
    options = _session_options(threads)
    key = GraphKey(
        source_sha256=source_sha256,
        int8_activations=int8_activations,
        trusted=trusted,
        heads=BERT_HEADS,
    )
    cache = cache or CompiledGraphCache(None)  # one without a directory never holds a graph
    graph = cache.get(key)
    if graph is None:
        serialized = read_model()
        graph = (
            _compiled_by_child(serialized, options, int8_activations, trusted)
            if compile_apart
            else None
        ) or compile_encoder(
            serialized, options, int8_activations=int8_activations, trusted=trusted
        )
        cache.put(key, graph)
    return session_from_bytes(
        graph.serialized,
        options,
        int8_activations=graph.int8_activations,
        compact=graph.compact,
    )


def _session_options(threads: int) -> ort.SessionOptions:
    """`threads` for each operator, one operator at a time: an encoder's graph is a chain."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return options


def compile_encoder(
    serialized: bytes, options: ort.SessionOptions, *, int8_activations: bool, trusted: bool
) -> CompiledGraph:
    """The graph to run: the compact one when the model is a BERT encoder that survives the
    rebuild, else the model's own, with int8 activations where it stores int8 weights.

    `onnx` and the compiler are imported here, not at the top: a start that finds its graph
    in the cache never needs them."""
    import onnx

    from factledger.adapters.embedding.onnx.bert_graph import compact_bert_encoder
    from factledger.adapters.embedding.onnx.quantize import quantize_activations

    model = onnx.load_from_string(serialized)
    compact = compact_bert_encoder(model, int8_activations=int8_activations, heads=BERT_HEADS)
    if compact is not None and (trusted or compact_is_faithful(model, options)):
        quantized = any(node.op_type == "DynamicQuantizeMatMul" for node in compact.graph.node)
        return CompiledGraph(compact.SerializeToString(), int8_activations=quantized, compact=True)
    rewritten = quantize_activations(model) if int8_activations else 0
    return CompiledGraph(model.SerializeToString(), int8_activations=rewritten > 0)


def _compiled_by_child(
    serialized: bytes, options: ort.SessionOptions, int8_activations: bool, trusted: bool
) -> CompiledGraph | None:
    from factledger.adapters.compile_apart import compile_apart

    asked = {
        "int8_activations": int8_activations,
        "trusted": trusted,
        "threads": options.intra_op_num_threads,
    }
    return compile_apart(serialized, "encoder", asked)


def compiled_in_child(serialized: bytes, asked: Mapping[str, Any]) -> CompiledGraph:
    """`compile_encoder` as the child of `_compiled_by_child` runs it."""
    return compile_encoder(
        serialized,
        _session_options(int(asked["threads"])),
        int8_activations=bool(asked["int8_activations"]),
        trusted=bool(asked["trusted"]),
    )


def compact_is_faithful(original: onnx.ModelProto, options: ort.SessionOptions) -> bool:
    """The float compact graph gives the original's hidden states on a padded probe batch."""
    from factledger.adapters.embedding.onnx.bert_graph import compact_bert_encoder

    compact = compact_bert_encoder(original, int8_activations=False, heads=BERT_HEADS)
    if compact is None:
        return False
    mask = (_PROBE_IDS != 0).astype(np.int64)
    try:
        expected = session_for(original, options, int8_activations=False).hidden_states(
            _PROBE_IDS, mask
        )
        actual = session_for(compact, options, int8_activations=False, compact=True).hidden_states(
            _PROBE_IDS, mask
        )
    except (ort.capi.onnxruntime_pybind11_state.Fail, ValueError, IndexError):
        return False
    real = mask[:, :, None].astype(bool)
    return bool(
        expected.shape == actual.shape and np.allclose(expected * real, actual * real, atol=1e-4)
    )


def session_for(
    model: onnx.ModelProto,
    options: ort.SessionOptions,
    *,
    int8_activations: bool,
    compact: bool = False,
) -> EncoderSession:
    """`int8_activations` records what the graph does (embedders then run one text per run);
    `compact`: a graph from `compact_bert_encoder`."""
    return session_from_bytes(
        model.SerializeToString(), options, int8_activations=int8_activations, compact=compact
    )


def session_from_bytes(
    serialized: bytes, options: ort.SessionOptions, *, int8_activations: bool, compact: bool
) -> EncoderSession:
    """A session on a serialized graph; see `session_for`."""
    if compact:
        options = _folding_dequantize(options)
    session = ort.InferenceSession(
        serialized,
        sess_options=options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(SLOWER_FUSIONS),
    )
    return EncoderSession(
        session=session,
        input_names=frozenset(i.name for i in session.get_inputs()),
        output_name=_hidden_states_output(session),
        int8_activations=int8_activations,
    )


def _folding_dequantize(options: ort.SessionOptions) -> ort.SessionOptions:
    """A copy of `options` that folds a compact graph's `DequantizeLinear` (the caller's may
    serve other sessions)."""
    folding = ort.SessionOptions()
    folding.intra_op_num_threads = options.intra_op_num_threads
    folding.inter_op_num_threads = options.inter_op_num_threads
    folding.graph_optimization_level = options.graph_optimization_level
    folding.optimized_model_filepath = options.optimized_model_filepath
    folding.add_session_config_entry(*FOLD_DEQUANTIZE)
    return folding


def _hidden_states_output(session: ort.InferenceSession) -> str:
    """`last_hidden_state` by name, else the first output of rank 3 (batch, tokens, width);
    exports name their outputs freely and some put a pooled vector first."""
    outputs = session.get_outputs()
    names: list[str] = [output.name for output in outputs]
    if HIDDEN_STATES in names:
        return HIDDEN_STATES
    ranks = [len(output.shape) for output in outputs]
    return next((name for name, rank in zip(names, ranks, strict=True) if rank == 3), names[0])
