"""A judge's int8 graph gives the exact integer products on every CPU: its `MatMulInteger`
weights move to uint8 (values and zero point raised by 128) before the session is made, so
onnxruntime's AVX2 kernel, which saturates pairs of uint8 x int8 products in int16 (a machine
without VNNI), computes the same numbers as a VNNI machine and as integer arithmetic."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from factledger.adapters.judgement.onnx_graph import exact_integer_weights, one_thread_session


def integer_matmul(weights: np.ndarray, zero_point: int, shared_by_add: bool = False) -> bytes:
    """A graph `y = MatMulInteger(x, W)` with uint8 x, int8 W; with `shared_by_add`, W is also
    read by another operator."""
    nodes = [helper.make_node("MatMulInteger", ["x", "w", "x_zero", "w_zero"], ["y"])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.INT32, [None, weights.shape[1]])]
    if shared_by_add:
        nodes.append(helper.make_node("Identity", ["w"], ["w_copy"]))
        outputs.append(helper.make_tensor_value_info("w_copy", TensorProto.INT8, weights.shape))
    graph = helper.make_graph(
        nodes,
        "matmul",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [None, weights.shape[0]])],
        outputs,
        initializer=[
            numpy_helper.from_array(weights.astype(np.int8), "w"),
            numpy_helper.from_array(np.array(zero_point, dtype=np.int8), "w_zero"),
            numpy_helper.from_array(np.array(0, dtype=np.uint8), "x_zero"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def test_full_range_products_come_out_exact() -> None:
    rng = np.random.default_rng(7)
    # Full-range values: pairs of 255 x -128 are what saturate an int16 sum.
    weights = rng.choice(np.array([-128, 127, -127, 126], dtype=np.int16), size=(64, 8))
    x = rng.choice(np.array([255, 254, 0], dtype=np.uint8), size=(4, 64))
    expected = x.astype(np.int64) @ (weights.astype(np.int64) - 3)

    (y,) = one_thread_session(integer_matmul(weights, 3)).run(None, {"x": x})

    assert np.array_equal(y, expected)


def test_the_weights_move_to_uint8_with_their_zero_point() -> None:
    model = onnx.load_from_string(integer_matmul(np.array([[-128, 5], [0, 127]]), -2))
    assert exact_integer_weights(model) == 2
    moved = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    assert moved["w"].dtype == np.uint8
    assert moved["w"].tolist() == [[0, 133], [128, 255]]
    assert int(moved["w_zero"]) == 126


def test_a_weight_another_operator_reads_stays_as_it_is() -> None:
    model = onnx.load_from_string(integer_matmul(np.array([[1, 2], [3, 4]]), 0, True))
    assert exact_integer_weights(model) == 0
    assert {t.name: t.data_type for t in model.graph.initializer}["w"] == TensorProto.INT8
