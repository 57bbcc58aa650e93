"""The student reader's shapes, its export and its torch-free reading (lab only: skipped
where torch is not installed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tokenizers import Tokenizer  # noqa: E402

from factledger.adapters.embedding.onnx.model_files import TOKENIZER  # noqa: E402
from factledger.adapters.judgement.qa_reader.reader import LineRead  # noqa: E402
from factledger.bench.judgement.qa_reader.line_reader import (  # noqa: E402
    FIRST_LINE_TOKEN,
    LineFieldReader,
    line_inputs,
)
from factledger.bench.judgement.qa_reader.student import LineReader  # noqa: E402
from factledger.bench.judgement.qa_reader.student_export import INT8_FILE, export  # noqa: E402

LINE = "hi, Ada Quill here, I run ops at Fernbrook Dairy"


def _tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _tiny() -> LineReader:
    torch.manual_seed(0)
    return LineReader(layers=1, width=32, heads=2)


def test_a_line_is_read_without_its_fields_and_its_offsets_point_into_it() -> None:
    (window,) = line_inputs(_tokenizer(), LINE, "Who is this?")

    said = window.ids[FIRST_LINE_TOKEN : FIRST_LINE_TOKEN + len(window.offsets)]
    assert len(said) == len(window.offsets)
    assert window.types[len(window.offsets) + 1] == 0  # the line's [SEP]
    assert window.types[-1] == 1  # the agent's line comes after it
    assert LINE[slice(*window.offsets[1])] == ","
    assert LINE[slice(*window.offsets[-1])] == "Dairy"


def test_a_long_line_is_read_in_overlapping_windows() -> None:
    windows = line_inputs(_tokenizer(), " ".join([LINE] * 12), "", max_tokens=40)

    assert len(windows) > 2
    assert all(len(w.ids) <= 40 for w in windows)


def test_the_student_scores_every_field_against_every_token() -> None:
    reader = _tiny()
    ids = torch.randint(1000, 2000, (3, 9))
    queries = reader.ask(torch.randint(1000, 2000, (4, 5)), torch.ones((4, 5), dtype=torch.long))

    start, end = reader.read(ids, torch.zeros_like(ids), torch.ones_like(ids), queries)

    assert queries.shape == (4, 2, 32)
    assert start.shape == end.shape == (3, 4, 9)


def test_the_exported_student_reads_as_torch_does(tmp_path: Path) -> None:
    reader = _tiny()
    export(reader, tmp_path)
    tokenizer = _tokenizer()
    lines = [LineRead(0, LINE, ""), LineRead(2, "we buy from Zorblax", "Who supplies you?")]
    student = LineFieldReader((tmp_path / INT8_FILE).read_bytes(), -50.0, None, tokenizer, 32)

    found = student.answers_sync(lines, ["name", "employer", "supplier"])
    queries = student.queries(["name", "employer"])

    # Untrained, every field beats a floor this low somewhere: each answer is whole words
    # of its own line.
    assert {a.field for a in found} == {"name", "employer", "supplier"}
    for a in found:
        text = LINE if a.index == 0 else lines[1].text
        assert a.value == text[a.start : a.end]
        assert a.value.strip()
    with torch.no_grad():
        rows = [
            t.ids for t in (tokenizer.encode(f.replace("_", " ")) for f in ("name", "employer"))
        ]
        width = max(map(len, rows))
        ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])
        expected = reader.ask(ids, (ids != 0).long()).numpy()
    assert np.allclose(queries, expected, atol=0.5)  # int8 weights read close to torch's
