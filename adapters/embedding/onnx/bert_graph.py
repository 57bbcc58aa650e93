"""Rebuild an exported BERT encoder as a compact graph of onnxruntime's fused operators.

The pinned MiniLM export spells attention out in ~280 small nodes (shape arithmetic, masks,
NaN guards), which onnxruntime's fusions do not recognise. The same weights in
`EmbedLayerNormalization`, one packed Q/K/V projection, `MultiHeadAttention`,
`LayerNormalization` and `BiasGelu` make ~80 nodes and compute the same function: with
float activations the hidden states match the original to ~2e-6. With int8 activations the
projections run as `DynamicQuantizeMatMul` on the shipped int8 weights (see
`onnx_quantize`). docs/adr/0006 has the timings.

Only graphs whose constants carry the Hugging Face BERT names (`...embeddings.word_embeddings`,
`...encoder.layer.N.attention.self.query.bias`, ...) are rebuilt; `compact_bert_encoder`
returns None for anything else, and the caller keeps the original graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from factledger.adapters.embedding.onnx.graph_options import (  # re-exported
    TOKEN_TYPES,
)
from factledger.adapters.embedding.onnx.quantize import CONTRIB_DOMAIN, unsigned_weights

_BIAS = re.compile(r"^(?P<prefix>.*)encoder\.layer\.(?P<layer>\d+)\.(?P<role>.+)\.bias$")
_PROJECTIONS = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)
REQUIRED_INPUTS = ("input_ids", "attention_mask")
OUTPUT = "last_hidden_state"


@dataclass(frozen=True, slots=True)
class _Projection:
    """x @ weights + bias; int8 weights carry a per-column scale."""

    weights: np.ndarray
    scale: np.ndarray | None
    bias: np.ndarray

    def dequantized(self) -> np.ndarray:
        weights = self.weights.astype(np.float32)
        return weights if self.scale is None else weights * self.scale[None, :]

    def int8(self) -> _Projection:
        """Int8 weights with a per-column scale: as shipped, or quantized here (symmetric)."""
        if self.scale is not None:
            return self
        scale = np.maximum(np.abs(self.weights).max(axis=0), 1e-12) / 127.0
        weights = np.clip(np.rint(self.weights / scale[None, :]), -127, 127).astype(np.int8)
        return _Projection(weights, scale.astype(np.float32), self.bias)


@dataclass(frozen=True, slots=True)
class _Table:
    """An embedding table: float rows, or int8 rows with a per-row scale."""

    values: np.ndarray
    scale: np.ndarray | None

    def dequantized(self) -> np.ndarray:
        values = self.values.astype(np.float32)
        return values if self.scale is None else values * self.scale.astype(np.float32)


@dataclass(frozen=True, slots=True)
class _Encoder:
    prefix: str
    constants: dict[str, np.ndarray]
    projections: dict[tuple[int, str], _Projection]
    inputs: tuple[str, ...]
    epsilon: float
    layers: int
    heads: int
    words: _Table
    positions: np.ndarray  # float, dequantized once


def compact_bert_encoder(
    model: onnx.ModelProto, *, int8_activations: bool, heads: int
) -> onnx.ModelProto | None:
    """The compact graph of `model`, or None when `model` is not a recognisable BERT encoder."""
    encoder = _read_encoder(model, heads)
    if encoder is None:
        return None
    return _Builder(encoder, int8_activations).model()


def _read_encoder(model: onnx.ModelProto, heads: int) -> _Encoder | None:
    graph = model.graph
    inputs = tuple(i.name for i in graph.input)
    if inputs not in (REQUIRED_INPUTS, (*REQUIRED_INPUTS, TOKEN_TYPES)):
        return None
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    producers = {output: node for node in graph.node for output in node.output}
    projections: dict[tuple[int, str], _Projection] = {}
    prefixes = set()
    for node in graph.node:
        if node.op_type != "Add":
            continue
        bias_name = next((name for name in node.input if _BIAS.match(name)), None)
        if bias_name is None or bias_name not in constants:
            continue
        match = _BIAS.match(bias_name)
        assert match is not None  # noqa: S101 - matched just above
        role = match["role"]
        matmul = next((producers.get(name) for name in node.input if name != bias_name), None)
        if role not in _PROJECTIONS or matmul is None or matmul.op_type != "MatMul":
            continue
        weights = _constant_weights(matmul.input[1], producers, constants)
        if weights is None:
            continue
        projections[(int(match["layer"]), role)] = _Projection(*weights, constants[bias_name])
        prefixes.add(match["prefix"])
    layers = len({layer for layer, _ in projections})
    if len(prefixes) != 1 or layers == 0 or len(projections) != layers * len(_PROJECTIONS):
        return None
    epsilons = {
        attribute.f
        for node in graph.node
        if node.op_type == "LayerNormalization"
        for attribute in node.attribute
        if attribute.name == "epsilon"
    }
    if len(epsilons) != 1:
        return None
    prefix = prefixes.pop()
    words = _embedding(constants, prefix, "word_embeddings")
    positions = _embedding(constants, prefix, "position_embeddings")
    others = ("token_type_embeddings.weight", "LayerNorm.weight", "LayerNorm.bias")
    if words is None or positions is None:
        return None
    if not all(f"{prefix}embeddings.{name}" in constants for name in others):
        return None
    return _Encoder(
        prefix,
        constants,
        projections,
        inputs,
        epsilons.pop(),
        layers,
        heads,
        words,
        positions.dequantized(),
    )


def _constant_weights(
    name: str, producers: dict[str, onnx.NodeProto], constants: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Float weights, or int8 weights with a per-column scale (`Mul(Cast(int8), scale)`)."""
    if name in constants:
        return constants[name], None
    dequantize = producers.get(name)
    if dequantize is None or dequantize.op_type != "Mul":
        return None
    cast = producers.get(dequantize.input[0])
    if cast is None or cast.op_type != "Cast" or cast.input[0] not in constants:
        return None
    weights, scale = constants[cast.input[0]], constants.get(dequantize.input[1])
    if weights.dtype != np.int8 or weights.ndim != 2 or scale is None:
        return None
    if scale.shape not in ((weights.shape[1],), (1, weights.shape[1])):
        return None
    return weights, scale.astype(np.float32).reshape(-1)


def _embedding(constants: dict[str, np.ndarray], prefix: str, name: str) -> _Table | None:
    """A float embedding table, or an int8 one with a per-row scale."""
    base = f"{prefix}embeddings.{name}.weight"
    if base in constants:
        return _Table(constants[base], None)
    weights, scale = constants.get(f"{base}_q"), constants.get(f"{base}_scale")
    if weights is None or scale is None or scale.shape != (weights.shape[0], 1):
        return None
    return _Table(weights, scale)


class _Builder:
    """Writes the compact graph: embeddings, then per layer attention and feed-forward."""

    def __init__(self, encoder: _Encoder, int8_activations: bool) -> None:
        self.encoder = encoder
        self.int8 = int8_activations
        self.nodes: list[onnx.NodeProto] = []
        self.constants: list[onnx.TensorProto] = []

    def model(self) -> onnx.ModelProto:
        hidden = self._embeddings()
        for layer in range(self.encoder.layers):
            last = layer == self.encoder.layers - 1
            hidden = self._layer(layer, hidden, OUTPUT if last else f"layer{layer}")
        width = int(
            self.encoder.constants[f"{self.encoder.prefix}embeddings.LayerNorm.weight"].size
        )
        graph = helper.make_graph(
            self.nodes,
            "bert_encoder_compact",
            [
                helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
                for n in self.encoder.inputs
            ],
            [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "tokens", width])],
            self.constants,
        )
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid(CONTRIB_DOMAIN, 1)]
        return helper.make_model(graph, opset_imports=opsets, ir_version=10)

    def _constant(self, name: str, value: np.ndarray) -> str:
        self.constants.append(numpy_helper.from_array(value, name))
        return name

    def _node(self, op: str, inputs: list[str], output: str, **attributes: float) -> str:
        standard = ("Add", "Cast", "DequantizeLinear", "LayerNormalization", "MatMul", "Split")
        domain = "" if op in standard else CONTRIB_DOMAIN
        node = helper.make_node(op, inputs, [output], domain=domain)
        node.attribute.extend(helper.make_attribute(k, v) for k, v in attributes.items())
        self.nodes.append(node)
        return output

    def _embeddings(self) -> str:
        encoder, prefix = self.encoder, f"{self.encoder.prefix}embeddings."
        for name in encoder.inputs:
            self._node("Cast", [name], f"{name}_int32", to=TensorProto.INT32)
        positions = encoder.positions
        token_types = encoder.constants[f"{prefix}token_type_embeddings.weight"]
        segments = ["", ""]
        if TOKEN_TYPES in encoder.inputs:
            segments = [f"{TOKEN_TYPES}_int32", self._constant("token_type_table", token_types)]
        else:
            # Without the input, BERT adds the embedding of token type 0 to every token.
            positions = positions + token_types[0][None, :]
        self.nodes.append(
            helper.make_node(
                "EmbedLayerNormalization",
                [
                    "input_ids_int32",
                    segments[0],
                    self._word_table(),
                    self._constant("position_table", positions),
                    segments[1],
                    self._constant(
                        "embeddings_gamma", encoder.constants[f"{prefix}LayerNorm.weight"]
                    ),
                    self._constant("embeddings_beta", encoder.constants[f"{prefix}LayerNorm.bias"]),
                ],
                ["embeddings", "mask_index"],
                domain=CONTRIB_DOMAIN,
                epsilon=encoder.epsilon,
            )
        )
        return "embeddings"

    def _word_table(self) -> str:
        """An int8 table stays int8 in the graph (a quarter of the bytes to store and load)
        behind a `DequantizeLinear` that onnxruntime folds into the float table when the
        session starts (`FOLD_DEQUANTIZE`): the same float32 values numpy would compute."""
        words = self.encoder.words
        if words.scale is None:
            return self._constant("word_table", words.values.astype(np.float32))
        quantized = self._constant("word_table_int8", words.values)
        scale = self._constant("word_table_scale", words.scale.astype(np.float32).reshape(-1))
        return self._node("DequantizeLinear", [quantized, scale], "word_table", axis=0)

    def _layer(self, layer: int, hidden: str, output: str) -> str:
        name = f"layer{layer}_"
        q, k, v = (
            self.encoder.projections[(layer, f"attention.self.{p}")]
            for p in ("query", "key", "value")
        )
        packed = _Projection(
            np.concatenate([q.weights, k.weights, v.weights], axis=1),
            None
            if q.scale is None or k.scale is None or v.scale is None
            else np.concatenate([q.scale, k.scale, v.scale]),
            np.concatenate([q.bias, k.bias, v.bias]),
        )
        qkv = self._project(hidden, packed, f"{name}qkv")
        self.nodes.append(
            helper.make_node("Split", [qkv], [f"{name}q", f"{name}k", f"{name}v"], axis=2)
        )
        context = self._node(
            "MultiHeadAttention",
            [
                f"{name}q",
                f"{name}k",
                f"{name}v",
                self._constant(f"{name}qkv_bias", packed.bias),
                "attention_mask_int32",
            ],
            f"{name}context",
            num_heads=self.encoder.heads,
        )
        attended = self._skip_norm(layer, context, hidden, "attention.output", f"{name}attended")
        feed = self._projection(layer, "intermediate.dense")
        widened = self._project(attended, feed, f"{name}widened")
        activated = self._node(
            "BiasGelu",
            [widened, self._constant(f"{name}widened_bias", feed.bias)],
            f"{name}activated",
        )
        return self._skip_norm(layer, activated, attended, "output", output)

    def _skip_norm(self, layer: int, x: str, skip: str, block: str, output: str) -> str:
        """LayerNorm(x @ W + bias + skip), the residual step that closes each block."""
        projection = self._projection(layer, f"{block}.dense")
        projected = self._project(x, projection, f"{output}_projected")
        norm = f"{self.encoder.prefix}encoder.layer.{layer}.{block}.LayerNorm"
        biased = self._node(
            "Add",
            [projected, self._constant(f"{output}_bias", projection.bias)],
            f"{output}_biased",
        )
        residual = self._node("Add", [biased, skip], f"{output}_residual")
        return self._node(
            "LayerNormalization",
            [
                residual,
                self._constant(f"{output}_gamma", self.encoder.constants[f"{norm}.weight"]),
                self._constant(f"{output}_beta", self.encoder.constants[f"{norm}.bias"]),
            ],
            output,
            axis=-1,
            epsilon=self.encoder.epsilon,
        )

    def _projection(self, layer: int, role: str) -> _Projection:
        return self.encoder.projections[(layer, role)]

    def _project(self, x: str, projection: _Projection, output: str) -> str:
        """x @ W without the bias (the fused operator after it adds the bias)."""
        if self.int8:
            quantized = projection.int8()
            assert quantized.scale is not None  # noqa: S101 - int8() always gives a scale
            weights, zero_point = unsigned_weights(quantized.weights)
            inputs = [
                x,
                self._constant(f"{output}_weights", weights),
                self._constant(f"{output}_scale", quantized.scale),
                self._constant(f"{output}_zero_point", zero_point),
            ]
            return self._node("DynamicQuantizeMatMul", inputs, output)
        weights_name = self._constant(f"{output}_weights", projection.dequantized())
        return self._node("MatMul", [x, weights_name], output)
