"""A one-pass reader's weights read back from its exported ONNX file, named as the lab's torch
model names them (ADR 0153), with numpy and onnx alone.

The int8 file is onnxruntime's `quantize_dynamic` of the float export (`export.py`): each
embedding table is stored as `reader.words.weight_quantized` with a per-tensor scale and zero
point (uint8), each linear layer's weight under an anonymous exporter name
(`onnx::MatMul_698_quantized`), transposed to `[in, out]`, with a scale and zero point per
output column (int8). Such a weight is named by the graph: it feeds a `MatMul` (or
`MatMulInteger`) whose product, cast and scaled, is added to a named bias
(`reader.layers.0.query.bias`), so its name is that bias's with `weight` for `bias`.

The exported graph computes the start and end scores only: the flags head (trained beside the
spans, read by nothing in the product) and the pair formulation's span head are not in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import numpy_helper

from factledger.adapters.pinned_files import read_pinned

PREFIX = "reader."  # export.py wraps the reader in a module holding it as `reader`
# The model's tensors the exported graph does not compute: left as the model starts them.
UNEXPORTED_HEADS = ("flags.", "span.")
_QUANTIZED, _SCALE, _ZERO_POINT = "_quantized", "_scale", "_zero_point"
_PRODUCTS = frozenset({"MatMul", "MatMulInteger"})
_ON_THE_WAY = frozenset({"Cast", "Mul"})  # between a product and its bias: its dtype and scale

Weights = dict[str, npt.NDArray[np.float32]]
Arrays = dict[str, npt.NDArray[Any]]  # as the file stores them: float, int8 or uint8


class ReaderFileError(ValueError):
    """The file is not a reader this model can be loaded from; the message names the tensors."""


def dequantized(
    quantized: npt.NDArray[Any],
    scale: npt.NDArray[np.float32],
    zero_point: npt.NDArray[Any],
    axis: int = -1,
) -> npt.NDArray[np.float32]:
    """(q - zero point) x scale, per tensor where the scale is one number, else per slice of
    `axis` (a `MatMulInteger` weight's is its last: one scale per output column)."""
    q = quantized.astype(np.float32)
    zero = zero_point.astype(np.float32)
    if scale.ndim == 0:
        return ((q - zero) * scale).astype(np.float32)
    if scale.shape != (q.shape[axis],) or zero.shape not in {(), scale.shape}:
        raise ReaderFileError(f"a scale of shape {scale.shape} for a tensor of {q.shape}")
    shape = [1] * q.ndim
    shape[axis] = -1
    return ((q - zero.reshape(shape if zero.ndim else ())) * scale.reshape(shape)).astype(
        np.float32
    )


def _consumers(graph: onnx.GraphProto) -> dict[str, list[onnx.NodeProto]]:
    found: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            found.setdefault(name, []).append(node)
    return found


def _bias_name(add: onnx.NodeProto, initializers: Mapping[str, object]) -> str | None:
    """The named bias an `Add` adds, if it adds one."""
    held = [i for i in add.input if i in initializers and i.endswith(".bias")]
    return held[0] if len(held) == 1 else None


def _with_aliases(graph: onnx.GraphProto, arrays: Arrays) -> Arrays:
    """`arrays` and, under its own name, each `Identity` of one of them: the exporter keeps
    one initializer for equal tensors (a fresh model's norms all start at one) and gives the
    other modules theirs through an `Identity` node named as their tensor."""
    out = dict(arrays)
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in out:
            out[node.output[0]] = out[node.input[0]]
    return out


def _bias_after(
    weight: str,
    consumers: Mapping[str, Sequence[onnx.NodeProto]],
    initializers: Mapping[str, object],
) -> str:
    """The named bias the product of `weight` is added to (through casts and scalings)."""
    products = [n for n in consumers.get(weight, ()) if n.op_type in _PRODUCTS]
    if len(products) != 1 or products[0].input[1] != weight:
        raise ReaderFileError(f"{weight} is not the weight of one matrix product")
    out = products[0].output[0]
    while len(following := consumers.get(out, ())) == 1:
        node = following[0]
        if node.op_type == "Add":
            if (bias := _bias_name(node, initializers)) is not None:
                return bias
            break
        if node.op_type not in _ON_THE_WAY:
            break
        out = node.output[0]
    raise ReaderFileError(f"no named bias follows the product of {weight}")


def graph_weights(model: onnx.ModelProto) -> Weights:
    """Every weight of the graph as a float32 array, named as the torch model's state names
    it (without the export's `reader.` prefix), a linear layer's as `[out, in]`."""
    graph = model.graph
    arrays = _with_aliases(graph, {i.name: numpy_helper.to_array(i) for i in graph.initializer})
    consumers = _consumers(graph)
    named: Weights = {}
    for name, array in arrays.items():
        if name.endswith((_SCALE, _ZERO_POINT)):
            continue  # read with the tensor they dequantise
        stem = name.removesuffix(_QUANTIZED)
        if stem != name:
            scale, zero = arrays.get(stem + _SCALE), arrays.get(stem + _ZERO_POINT)
            if scale is None or zero is None:
                raise ReaderFileError(f"{name} has no scale or zero point beside it")
            value = dequantized(array, scale, zero)
        elif array.dtype == np.float32:
            value = array
        else:
            continue  # an index or shape constant of the graph, no weight
        if stem.startswith(PREFIX):
            named[stem] = value
        elif any(n.op_type in _PRODUCTS for n in consumers.get(name, ())):
            bias = _bias_after(name, consumers, arrays)
            named[bias.removesuffix("bias") + "weight"] = np.ascontiguousarray(value.T)
    return {k.removeprefix(PREFIX): v for k, v in named.items()}


def read_reader_file(path: Path, sha256: str | None) -> Weights:
    """`graph_weights` of the file once its SHA-256 is `sha256` (None: read as it is)."""
    raw = read_pinned(path, sha256, ReaderFileError, "QA reader file")
    return graph_weights(onnx.load_from_string(raw))


@dataclass(frozen=True, slots=True)
class Fit:
    """How a file's weights meet a model's tensors (each by name, shapes compared)."""

    missing: tuple[str, ...]  # the model's, not in the file (the unexported heads aside)
    unexpected: tuple[str, ...]  # the file's, with no place in the model
    misshapen: tuple[str, ...]  # in both, of different shapes
    left_as_started: tuple[str, ...]  # the unexported heads' tensors

    def check(self, what: str) -> None:
        """Raises `ReaderFileError` naming what does not fit, if anything does not."""
        problems = [
            f"{label}: {', '.join(names)}"
            for label, names in (
                ("missing from the file", self.missing),
                ("in the file with no place in the model", self.unexpected),
                ("of another shape", self.misshapen),
            )
            if names
        ]
        if problems:
            raise ReaderFileError(f"{what} does not fit the reader: " + "; ".join(problems))


def fit_of(weights: Mapping[str, tuple[int, ...]], model: Mapping[str, tuple[int, ...]]) -> Fit:
    """The file's tensors' shapes against the model's, by name."""
    heads = tuple(sorted(n for n in model if n.startswith(UNEXPORTED_HEADS) and n not in weights))
    return Fit(
        missing=tuple(sorted(n for n in model if n not in weights and n not in heads)),
        unexpected=tuple(sorted(n for n in weights if n not in model)),
        misshapen=tuple(
            sorted(
                f"{n} {weights[n]} for {model[n]}"
                for n in weights
                if n in model and tuple(weights[n]) != tuple(model[n])
            )
        ),
        left_as_started=heads,
    )


def reader_size(weights: Mapping[str, npt.NDArray[np.float32]], head_width: int) -> dict[str, int]:
    """The encoder's size (the model's keywords) as the file's tensors give it."""
    try:
        vocab, width = weights["words.weight"].shape
    except KeyError as exc:
        raise ReaderFileError("missing from the file: words.weight") from exc
    layers = 1 + max((int(k.split(".")[1]) for k in weights if k.startswith("layers.")), default=-1)
    return {"vocab": vocab, "width": width, "layers": layers, "heads": width // head_width}
