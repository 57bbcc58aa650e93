"""Run a weight-only int8 ONNX model with int8 activations too (dynamic quantization).

The pinned MiniLM model stores its weights as int8 but dequantizes them (`Cast` then `Mul` by a
scale) before every `MatMul`, so onnxruntime folds them back to float32 and multiplies in
float. On a CPU without VNNI most of a query's time then goes to `MatMul`. Rewiring each such
`MatMul` to onnxruntime's `DynamicQuantizeMatMul` keeps the shipped weights and scales (nothing
is re-quantized) and quantizes only the activations, per call, which makes a query faster.
docs/adr/0006 and docs/benchmarks.md have the measurements, including the LoCoMo retrieval
check.

The weights move from int8 to uint8 with a zero point of 128, the same values: with signed
weights, onnxruntime's AVX2 kernel adds pairs of uint8 x int8 products into int16 and
saturates (errors of 15% of the output on full-range weights), while uint8 x uint8 takes a
widening path that is exact and, measured here, no slower.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

CONTRIB_DOMAIN = "com.microsoft"


def quantize_activations(model: onnx.ModelProto) -> int:
    """Rewrite `model` in place; returns how many `MatMul`s now run on int8 activations.

    Only `MatMul(x, Mul(Cast(int8 constant), float scale))` with a per-tensor or per-column
    scale is rewritten; any other graph comes back unchanged with a count of 0.
    """
    graph = model.graph
    constants = {tensor.name: tensor for tensor in graph.initializer}
    producers = {output: node for node in graph.node for output in node.output}
    rewritten = 0
    for node in graph.node:
        if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx"):
            continue
        weights = _int8_weights_of(node, producers, constants)
        if weights is None:
            continue
        signed_weights, scale = weights
        names = [f"{signed_weights.name}_{part}" for part in ("uint8", "scale", "zero_point")]
        unsigned, zero_point = unsigned_weights(numpy_helper.to_array(signed_weights))
        if scale.size == 1:
            zero_point = zero_point[:1]
        for name, value in zip(names, (unsigned, scale, zero_point), strict=True):
            graph.initializer.append(numpy_helper.from_array(value, name))
        activations = node.input[0]
        node.op_type = "DynamicQuantizeMatMul"
        node.domain = CONTRIB_DOMAIN
        del node.input[:]
        node.input.extend([activations, *names])
        rewritten += 1
    if rewritten:
        if not any(opset.domain == CONTRIB_DOMAIN for opset in model.opset_import):
            model.opset_import.append(onnx.helper.make_opsetid(CONTRIB_DOMAIN, 1))
        _drop_unused(graph)
    return rewritten


def unsigned_weights(signed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same int8 weights as uint8 with a per-column zero point of 128 (see above why)."""
    unsigned = (signed.astype(np.int16) + 128).astype(np.uint8)
    return unsigned, np.full(signed.shape[1], 128, dtype=np.uint8)


def _int8_weights_of(
    matmul: onnx.NodeProto,
    producers: dict[str, onnx.NodeProto],
    constants: dict[str, onnx.TensorProto],
) -> tuple[onnx.TensorProto, np.ndarray] | None:
    """The int8 weights and a 1-D float32 scale behind a MatMul's right operand, if any."""
    dequantize = producers.get(matmul.input[1])
    if dequantize is None or dequantize.op_type != "Mul" or len(dequantize.input) != 2:
        return None
    cast = producers.get(dequantize.input[0])
    scale_tensor = constants.get(dequantize.input[1])
    if cast is None or cast.op_type != "Cast" or scale_tensor is None:
        return None
    weights = constants.get(cast.input[0])
    if weights is None or weights.data_type != onnx.TensorProto.INT8 or len(weights.dims) != 2:
        return None
    scale = numpy_helper.to_array(scale_tensor).astype(np.float32)
    columns = weights.dims[1]
    # DynamicQuantizeMatMul takes a per-tensor or per-column scale only; a scale per row
    # (input channel) cannot move into it.
    if scale.size != 1 and scale.shape not in ((columns,), (1, columns)):
        return None
    return weights, scale.reshape(-1)


def _drop_unused(graph: onnx.GraphProto) -> None:
    """Remove the dequantizing nodes and constants nothing reads any more."""
    wanted = {output.name for output in graph.output}
    while True:
        read = {name for node in graph.node for name in node.input} | wanted
        unused = [node for node in graph.node if not any(out in read for out in node.output)]
        if not unused:
            break
        for node in unused:
            graph.node.remove(node)
    read = {name for node in graph.node for name in node.input}
    for tensor in [tensor for tensor in graph.initializer if tensor.name not in read]:
        graph.initializer.remove(tensor)
