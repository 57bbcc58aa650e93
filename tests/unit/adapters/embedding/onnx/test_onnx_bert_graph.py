"""The compact encoder graph computes what the exported graph computes, in fewer nodes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from factledger.adapters.embedding.onnx import session as onnx_session
from factledger.adapters.embedding.onnx.bert_graph import compact_bert_encoder
from factledger.adapters.embedding.onnx.model_files import TOKENIZER, OnnxModelFiles, OnnxPreset
from factledger.adapters.embedding.onnx.session import session_for

SENTENCES = [
    "what does the customer prefer for delivery on weekdays",
    "allergies",
    "We switched to a new packaging supplier last spring because the old one was late twice",
]
LAYERS = {OnnxPreset.ALL_MINILM_L6: 6, OnnxPreset.PARAPHRASE_MINILM_L3: 3}
WORD_TABLES = {
    OnnxPreset.ALL_MINILM_L6: {
        "word_table_int8": onnx.TensorProto.INT8,
        "word_table_scale": onnx.TensorProto.FLOAT,
    },
    OnnxPreset.PARAPHRASE_MINILM_L3: {"word_table": onnx.TensorProto.FLOAT},
}


@pytest.fixture(scope="module", params=list(OnnxPreset))
def preset(request: pytest.FixtureRequest) -> OnnxPreset:
    chosen: OnnxPreset = request.param
    return chosen


@pytest.fixture(scope="module")
def exported(preset: OnnxPreset) -> onnx.ModelProto:
    return onnx.load(str(OnnxModelFiles.preset(preset).model))


@pytest.fixture(scope="module")
def tokens() -> tuple[np.ndarray, np.ndarray]:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    encodings = tokenizer.encode_batch(SENTENCES)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    return ids, np.array([e.attention_mask for e in encodings], dtype=np.int64)


def _hidden(model: onnx.ModelProto, tokens: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    ids, mask = tokens
    encoder = session_for(model, ort.SessionOptions(), int8_activations=False)
    return encoder.hidden_states(ids, mask) * mask[:, :, None]  # padding carries no meaning


def _pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    pooled = hidden.sum(axis=1) / mask.sum(axis=1, keepdims=True)
    normalised: np.ndarray = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return normalised


def test_in_float_the_compact_graph_gives_the_exported_hidden_states(
    exported: onnx.ModelProto, tokens: tuple[np.ndarray, np.ndarray]
) -> None:
    compact = compact_bert_encoder(exported, int8_activations=False, heads=12)

    assert compact is not None
    assert len(compact.graph.node) < len(exported.graph.node) / 4
    assert np.allclose(_hidden(compact, tokens), _hidden(exported, tokens), atol=1e-4)


def test_with_int8_activations_every_projection_is_quantized_and_stays_close(
    preset: OnnxPreset, exported: onnx.ModelProto, tokens: tuple[np.ndarray, np.ndarray]
) -> None:
    compact = compact_bert_encoder(exported, int8_activations=True, heads=12)

    assert compact is not None
    quantized = [n for n in compact.graph.node if n.op_type == "DynamicQuantizeMatMul"]
    # per layer: packed query/key/value, attention output, feed-forward in and out
    assert len(quantized) == LAYERS[preset] * 4
    assert not [n for n in compact.graph.node if n.op_type == "MatMul"]
    mask = tokens[1]
    cosines = (
        _pooled(_hidden(compact, tokens), mask) * _pooled(_hidden(exported, tokens), mask)
    ).sum(axis=1)
    assert cosines.min() > 0.98


def test_a_graph_that_is_not_a_bert_encoder_is_not_rebuilt() -> None:
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["input_ids"], ["last_hidden_state"])],
        "identity",
        [
            onnx.helper.make_tensor_value_info(name, onnx.TensorProto.INT64, [1, 4])
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [onnx.helper.make_tensor_value_info("last_hidden_state", onnx.TensorProto.INT64, [1, 4])],
    )

    model = onnx.helper.make_model(graph)
    assert compact_bert_encoder(model, int8_activations=True, heads=12) is None


def test_a_wrong_head_count_fails_the_probe_and_keeps_the_exported_graph(
    exported: onnx.ModelProto, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = ort.SessionOptions()
    assert onnx_session.compact_is_faithful(exported, options)

    monkeypatch.setattr(onnx_session, "BERT_HEADS", 8)

    assert not onnx_session.compact_is_faithful(exported, options)


def test_an_int8_word_table_stays_int8_in_the_graph(
    preset: OnnxPreset, exported: onnx.ModelProto
) -> None:
    compact = compact_bert_encoder(exported, int8_activations=True, heads=12)

    assert compact is not None
    tables = {t.name: t.data_type for t in compact.graph.initializer if "word_table" in t.name}
    # An int8 table is dequantized by onnxruntime's constant folding when the session starts.
    assert tables == WORD_TABLES[preset]


def test_the_session_of_a_compact_graph_dequantizes_its_word_table_once(
    exported: onnx.ModelProto, tmp_path: Path
) -> None:
    compact = compact_bert_encoder(exported, int8_activations=True, heads=12)
    assert compact is not None

    def run_time_dequantizers(*, compact_session: bool) -> int:
        options = ort.SessionOptions()
        optimized = tmp_path / f"optimized-{compact_session}.onnx"
        options.optimized_model_filepath = str(optimized)
        session_for(compact, options, int8_activations=True, compact=compact_session)
        graph = onnx.load(str(optimized)).graph
        return sum(node.op_type == "DequantizeLinear" for node in graph.node)

    # Folded into a constant when the session starts, instead of running on every query.
    assert run_time_dequantizers(compact_session=True) == 0
    has_int8_table = "word_table_int8" in {t.name for t in compact.graph.initializer}
    assert run_time_dequantizers(compact_session=False) == int(has_int8_table)
