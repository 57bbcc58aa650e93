"""The QA reader trains and reads (lab only: skipped where torch is not installed)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from factledger.adapters.embedding.onnx.model_files import TOKENIZER  # noqa: E402
from factledger.bench.judgement.qa_reader.batches import Example  # noqa: E402
from factledger.bench.judgement.qa_reader.evaluate import Session, read_all  # noqa: E402
from factledger.bench.judgement.qa_reader.model import QaReader, read_safetensors  # noqa: E402
from factledger.bench.judgement.qa_reader.tokens import PairTokens, load_tokenizer  # noqa: E402
from factledger.bench.judgement.qa_reader.train import Budget, fit  # noqa: E402

LINE = "hi, Ada Quill here, I run ops at Fernbrook Dairy"


def _tiny() -> QaReader:
    torch.manual_seed(0)
    return QaReader(layers=1, width=32, heads=2)


def _examples(tokens: PairTokens) -> list[Example]:
    name = LINE.index("Ada Quill")
    employer = LINE.index("Fernbrook")
    asked = [
        ("what is the person's name?", ((name, name + 9),)),
        ("what is the person's employer?", ((employer, len(LINE)),)),
        ("what is the person's budget?", ()),
    ]
    return [
        Example(window, (False,) * 4, bool(spans))
        for question, spans in asked
        for window in tokens.encode(question, LINE, "Who is this?", spans)
    ]


def test_training_fits_the_answers_and_saves_the_weights(tmp_path: Path) -> None:
    tokens = PairTokens(load_tokenizer(TOKENIZER))
    reader = _tiny()

    done = fit(
        reader,
        _examples(tokens) * 8,
        Budget(seconds=120, epochs=60, batch=8, learning_rate=2e-3),
        tmp_path,
    )

    assert (tmp_path / "reader.pt").exists()
    assert done["final_loss"] < 1.0
    session = Session("c", 0, (("agent", "Who is this?"), ("subject", LINE)),
                      ("name", "employer"), {"name": False, "employer": False})  # fmt: skip
    best = {r.field: r for r in sorted(read_all(reader, tokens, [session]), key=lambda r: r.margin)}
    assert best["name"].value == "Ada Quill"
    assert "Fernbrook" in best["employer"].value


def test_base_weights_are_read_from_a_safetensors_file(tmp_path: Path) -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    header = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header.encode() + array.tobytes())

    read = read_safetensors(path)

    assert read["w"].tolist() == array.tolist()
