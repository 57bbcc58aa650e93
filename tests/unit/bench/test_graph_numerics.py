"""The lab's side-by-side of a judge's int8 graph as shipped and as the product runs it: both
timed in one run, and the difference of their outputs reported (none where the products were
already exact)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from factledger.bench.judgement.graph_numerics import measure


def small_graph() -> bytes:
    """`y = MatMulInteger(DynamicQuantizeLinear(ids as float), W)`: small weights, exact on
    every CPU either way."""
    nodes = [
        helper.make_node("Cast", ["ids"], ["x"], to=TensorProto.FLOAT),
        helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "scale", "zero"]),
        helper.make_node("MatMulInteger", ["q", "w", "zero", "w_zero"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 48])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 4])],
        initializer=[
            numpy_helper.from_array(np.ones((48, 4), dtype=np.int8), "w"),
            numpy_helper.from_array(np.array(0, dtype=np.int8), "w_zero"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def test_both_paths_are_timed_and_compared() -> None:
    measured = measure(small_graph())
    assert set(measured) == {"as_shipped", "exact", "max_output_difference"}
    assert measured["max_output_difference"] == 0.0
    for path in ("as_shipped", "exact"):
        timed = measured[path]
        assert isinstance(timed, dict)
        assert timed["run_ms"] > 0
