"""A one-pass reader loaded from its exported file, to train on from it (lab only: skipped
where torch is not installed): the float file gives the reader back exactly, the int8 file
within its quantisation, and exported again it quantises to the same integers."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

torch = pytest.importorskip("torch")

from factledger.bench.judgement.qa_reader.export import FLOAT_FILE, INT8_FILE, export  # noqa: E402
from factledger.bench.judgement.qa_reader.model import FieldsReader, from_onnx  # noqa: E402
from factledger.bench.judgement.qa_reader.onnx_weights import ReaderFileError  # noqa: E402

UNEXPORTED = ("flags.", "span.")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[FieldsReader, Path]:
    torch.manual_seed(28)
    reader = FieldsReader(layers=2, width=64, heads=2)
    reader.use_field_words()
    out = tmp_path_factory.mktemp("exported")
    export(reader, out)
    return reader, out


def _pin(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _quantized(path: Path) -> dict[str, np.ndarray]:
    return {
        i.name: numpy_helper.to_array(i)
        for i in onnx.load(path).graph.initializer
        if i.name.endswith("_quantized")
    }


def test_the_float_file_gives_the_reader_back_its_flags_head_fresh(
    exported: tuple[FieldsReader, Path],
) -> None:
    reader, out = exported

    loaded, fit = from_onnx(out / FLOAT_FILE, _pin(out / FLOAT_FILE))

    assert loaded.pools_field_words
    assert fit.left_as_started == ("flags.bias", "flags.weight", "span.bias", "span.weight")
    ours = dict(loaded.named_parameters())
    for name, parameter in reader.named_parameters():
        if not name.startswith(UNEXPORTED):
            assert torch.equal(ours[name], parameter), name


def test_the_int8_file_gives_each_weight_back_within_its_quantisation(
    exported: tuple[FieldsReader, Path],
) -> None:
    reader, out = exported

    loaded, _ = from_onnx(out / INT8_FILE, _pin(out / INT8_FILE))

    ours = dict(loaded.named_parameters())
    for name, parameter in reader.named_parameters():
        if name.startswith(UNEXPORTED):
            continue
        largest = float(parameter.detach().abs().max())
        # int8 per output channel, uint8 per table: a step is at most 2 * largest / 254
        assert float((ours[name] - parameter).abs().max()) <= largest / 127 + 1e-6, name


def test_the_loaded_reader_exported_again_quantises_to_the_same_integers(
    exported: tuple[FieldsReader, Path], tmp_path: Path
) -> None:
    _, out = exported
    loaded, _ = from_onnx(out / INT8_FILE, _pin(out / INT8_FILE))

    export(loaded, tmp_path)

    before, after = _quantized(out / INT8_FILE), _quantized(tmp_path / INT8_FILE)
    assert before.keys() == after.keys()
    for name, array in before.items():
        assert np.abs(array.astype(int) - after[name].astype(int)).max() <= 1, name


def test_a_file_that_is_not_this_readers_graph_is_refused_naming_what_it_lacks(
    exported: tuple[FieldsReader, Path], tmp_path: Path
) -> None:
    _, out = exported
    model = onnx.load(out / FLOAT_FILE)
    kept = [i for i in model.graph.initializer if i.name != "reader.positions.weight"]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    onnx.save(model, tmp_path / "partial.onnx")

    with pytest.raises(ReaderFileError, match=r"missing from the file: positions\.weight$"):
        from_onnx(tmp_path / "partial.onnx", None)
