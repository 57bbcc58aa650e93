"""The QA reader's int8 graph rewritten so that its activations stay in float (ADR 0155's
candidate C, rejected; the lab injects it with `batching --float-activations`): every
dynamically quantised product (`DynamicQuantizeLinear` of the activation, `MatMulInteger`
with an int8 weight, `Cast`, `Mul` by the two scales) becomes one `MatMul` of the activation
with the weight dequantised once, at load. The weights are the pinned file's integers; only
the per-batch rounding of the activations goes, and with it any dependence of a window's
numbers on the windows run beside it.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import onnx
from onnx import helper, numpy_helper


class UnexpectedGraphError(ValueError):
    """The graph's quantised products are not laid out as onnxruntime's dynamic quantisation
    lays them out."""


def float_activations(model: bytes) -> bytes:
    """`model` with each dynamically quantised product in float (its weights dequantised)."""
    graph_model = onnx.load_from_string(model)
    graph = graph_model.graph
    initializers = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[onnx.NodeProto]] = defaultdict(list)
    for node in graph.node:
        for name in node.input:
            consumers[name].append(node)
    gone: set[int] = set()
    replacement: dict[int, onnx.NodeProto] = {}
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        quantize = producer.get(node.input[0])
        (cast,) = consumers[node.output[0]]
        (rescale,) = consumers[cast.output[0]]
        if quantize is None or quantize.op_type != "DynamicQuantizeLinear":
            raise UnexpectedGraphError(node.name)
        if cast.op_type != "Cast" or rescale.op_type != "Mul":
            raise UnexpectedGraphError(node.name)
        weight_name = node.input[1]
        weight = _dequantised(initializers, weight_name, node.input[3])
        float_name = weight_name.removesuffix("_quantized") + "_float"
        graph.initializer.append(numpy_helper.from_array(weight, float_name))
        replacement[id(node)] = helper.make_node(
            "MatMul", [quantize.input[0], float_name], [rescale.output[0]], name=node.name
        )
        gone.update({id(cast), id(rescale)})
    kept = [replacement.get(id(n), n) for n in graph.node if id(n) not in gone]
    del graph.node[:]
    graph.node.extend(_live(kept, {o.name for o in graph.output}))
    used = {name for node in graph.node for name in node.input}
    live_initializers = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(live_initializers)
    serialized: bytes = graph_model.SerializeToString()
    return serialized


def _dequantised(
    initializers: dict[str, onnx.TensorProto], weight_name: str, zero_point_name: str
) -> np.ndarray:
    """(q - zero point) x scale, per output column where the scale is per column."""
    quantised = numpy_helper.to_array(initializers[weight_name]).astype(np.float32)
    zero_point = numpy_helper.to_array(initializers[zero_point_name]).astype(np.float32)
    scale_name = weight_name.removesuffix("_quantized") + "_scale"
    scale = numpy_helper.to_array(initializers[scale_name]).astype(np.float32)
    return ((quantised - zero_point) * scale).astype(np.float32)


def _live(nodes: list[onnx.NodeProto], outputs: set[str]) -> list[onnx.NodeProto]:
    """`nodes` without those whose outputs nothing reads (the quantisers and scale products
    the float products left behind), in their order."""
    needed = set(outputs)
    keep: list[onnx.NodeProto] = []
    for node in reversed(nodes):
        if any(out in needed for out in node.output):
            keep.append(node)
            needed.update(node.input)
    return keep[::-1]
