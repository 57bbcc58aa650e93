"""A reader's weights read back from its exported ONNX file, with numpy and onnx alone (no
torch): the quantised weights dequantised, each linear layer's named by the bias it feeds."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

from factledger.bench.judgement.qa_reader.onnx_weights import (
    ReaderFileError,
    dequantized,
    fit_of,
    graph_weights,
    read_reader_file,
    reader_size,
)

RNG = np.random.default_rng(28)
WORDS = RNG.normal(0, 0.05, (40, 32)).astype(np.float32)
QUERY = RNG.normal(0, 0.05, (16, 32)).astype(np.float32)  # torch's [out, in]
QUERY_BIAS = RNG.normal(0, 0.05, 16).astype(np.float32)
NORM = np.ones(16, dtype=np.float32)


def _graph(*, bias_name: str = "reader.layers.0.query.bias") -> onnx.ModelProto:
    """The export's shape in small: a table gathered, a product whose weight has the
    exporter's anonymous name (transposed), its result added to a named bias, then a norm."""
    nodes = [
        helper.make_node("Gather", ["reader.words.weight", "ids"], ["x"]),
        helper.make_node("MatMul", ["x", "onnx::MatMul_7"], ["product"]),
        helper.make_node("Add", [bias_name, "product"], ["query"]),
        helper.make_node(
            "LayerNormalization", ["query", "reader.start_of.weight", "reader.start_of.bias"], ["y"]
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "reader",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "tokens", 16])],
        [
            numpy_helper.from_array(WORDS, "reader.words.weight"),
            numpy_helper.from_array(np.ascontiguousarray(QUERY.T), "onnx::MatMul_7"),
            numpy_helper.from_array(QUERY_BIAS, bias_name),
            numpy_helper.from_array(NORM, "reader.start_of.weight"),
            numpy_helper.from_array(np.zeros(16, dtype=np.float32), "reader.start_of.bias"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _int8(tmp_path: Path, model: onnx.ModelProto) -> Path:
    """Quantised as `export.quantized` does it (weights per channel, int8)."""
    onnx.save(model, tmp_path / "float.onnx")
    quantize_dynamic(
        str(tmp_path / "float.onnx"),
        str(tmp_path / "int8.onnx"),
        per_channel=True,
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul", "Gather"],
    )
    return tmp_path / "int8.onnx"


def test_a_tensor_is_dequantised_per_tensor_or_per_output_column() -> None:
    q = np.array([[-2, 0, 4], [1, -1, 2]], dtype=np.int8)

    whole = dequantized(q, np.array(0.5, np.float32), np.array(1, np.int8))
    columns = dequantized(q, np.array([1.0, 2.0, 0.5], np.float32), np.zeros(3, np.int8))

    np.testing.assert_array_equal(whole, [[-1.5, -0.5, 1.5], [0.0, -1.0, 0.5]])
    np.testing.assert_array_equal(columns, [[-2.0, 0.0, 2.0], [1.0, -2.0, 1.0]])
    assert columns.dtype == np.float32


def test_a_scale_that_fits_no_column_is_refused() -> None:
    with pytest.raises(ReaderFileError, match="scale"):
        dequantized(np.zeros((2, 3), np.int8), np.ones(2, np.float32), np.zeros(2, np.int8))


def test_an_int8_file_reads_back_named_as_the_model_names_its_tensors(tmp_path: Path) -> None:
    path = _int8(tmp_path, _graph())
    stored = {i.name for i in onnx.load(path).graph.initializer}
    assert {"onnx::MatMul_7_quantized", "reader.words.weight_quantized"} <= stored

    weights = read_reader_file(path, None)

    assert sorted(weights) == [
        "layers.0.query.bias",
        "layers.0.query.weight",
        "start_of.bias",
        "start_of.weight",
        "words.weight",
    ]
    # The product's weight, stored transposed under an anonymous name, is the query's again,
    # within half a quantisation step of each output row (int8, per channel).
    step = np.abs(QUERY).max(axis=1, keepdims=True) / 127
    assert weights["layers.0.query.weight"].shape == QUERY.shape
    assert np.all(np.abs(weights["layers.0.query.weight"] - QUERY) <= step / 2 + 1e-7)
    assert np.abs(weights["words.weight"] - WORDS).max() <= (WORDS.max() - WORDS.min()) / 255
    np.testing.assert_array_equal(weights["layers.0.query.bias"], QUERY_BIAS)


def test_a_float_file_reads_back_exactly(tmp_path: Path) -> None:
    weights = graph_weights(_graph())

    np.testing.assert_array_equal(weights["layers.0.query.weight"], QUERY)
    np.testing.assert_array_equal(weights["words.weight"], WORDS)


def test_a_tensor_the_exporter_shares_between_modules_is_read_under_each_name() -> None:
    model = _graph()
    model.graph.node.append(
        helper.make_node("Identity", ["reader.start_of.weight"], ["reader.end_of.weight"])
    )

    weights = graph_weights(model)

    np.testing.assert_array_equal(weights["end_of.weight"], weights["start_of.weight"])


def test_a_product_added_to_no_named_bias_is_refused_naming_its_weight(tmp_path: Path) -> None:
    path = _int8(tmp_path, _graph(bias_name="onnx::Add_3"))

    with pytest.raises(
        ReaderFileError, match="no named bias follows the product of onnx::MatMul_7"
    ):
        read_reader_file(path, None)


def test_a_file_is_read_only_at_its_pin(tmp_path: Path) -> None:
    path = _int8(tmp_path, _graph())

    with pytest.raises(ReaderFileError, match="sha256 differs"):
        read_reader_file(path, "0" * 64)
    assert read_reader_file(path, hashlib.sha256(path.read_bytes()).hexdigest())


def test_the_heads_the_graph_does_not_compute_are_left_as_started_and_nothing_else() -> None:
    model = {"words.weight": (40, 32), "flags.weight": (4, 32), "flags.bias": (4,)}

    fit = fit_of({"words.weight": (40, 32)}, model)

    fit.check("reader.onnx")
    assert fit.left_as_started == ("flags.bias", "flags.weight")


def test_a_file_that_does_not_fit_is_refused_naming_what_does_not() -> None:
    model = {"words.weight": (40, 32), "layers.0.query.weight": (16, 32), "end_of.bias": (16,)}
    weights = {"words.weight": (40, 16), "layers.0.query.weight": (16, 32), "extra.bias": (3,)}

    with pytest.raises(ReaderFileError) as refused:
        fit_of(weights, model).check("reader.onnx")

    message = str(refused.value)
    assert "missing from the file: end_of.bias" in message
    assert "no place in the model: extra.bias" in message
    assert "words.weight (40, 16) for (40, 32)" in message


def test_the_encoders_size_is_read_from_the_file() -> None:
    weights = {
        "words.weight": np.zeros((40, 64), np.float32),
        "layers.0.query.bias": np.zeros(64, np.float32),
        "layers.2.query.bias": np.zeros(64, np.float32),
    }

    assert reader_size(weights, head_width=32) == {
        "vocab": 40,
        "width": 64,
        "layers": 3,
        "heads": 2,
    }
