"""The reader of requests to forget (ADR 0165): read only where the forget flag passes its
gate, each sentence alone, and a request only at the reader's threshold; a file without its
gate is refused."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.judgement.forget_reader import (
    PACKAGED_FORGET_READER,
    PACKAGED_FORGET_READER_GATE,
    PACKAGED_FORGET_READER_MIN,
    PACKAGED_FORGET_READER_SHA256,
    PACKAGED_MULTILINGUAL_READER,
    PACKAGED_MULTILINGUAL_READER_GATE,
    PACKAGED_MULTILINGUAL_READER_MIN,
    PACKAGED_MULTILINGUAL_READER_SHA256,
    QUESTION,
    EitherReader,
    ForgetReader,
    ForgetReaderIntegrityError,
)
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import PACKAGED_HEADS, LearnedJudge
from factledger.application.errors import ModelUnavailableError


class ScriptedModel:
    """Reads a pair as its script says (yes, no, neither), and records each run."""

    def __init__(self, yes: dict[str, float]) -> None:
        self.yes = yes
        self.runs: list[list[tuple[str, str]]] = []

    def probabilities_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        self.runs.append(list(pairs))
        return np.array([[self.yes[s], 0.0, 1 - self.yes[s]] for _, s in pairs], dtype=np.float32)


def test_the_reader_decides_among_what_the_gate_passes() -> None:
    model = ScriptedModel({"a": 0.9, "b": 0.3, "c": 0.99, "d": 0.5})
    reader = ForgetReader(model, reader_min=0.5, gate=0.2)

    asked = asyncio.run(reader.requests(["a", "b", "c", "d"], [0.25, 0.9, 0.1, 0.5]))

    assert asked == [True, False, False, True]
    assert model.runs == [[(QUESTION, "a")], [(QUESTION, "b")], [(QUESTION, "d")]]


def test_nothing_the_gate_passes_runs_nothing() -> None:
    model = ScriptedModel({})
    reader = ForgetReader(model, reader_min=0.5, gate=0.2)

    assert asyncio.run(reader.requests(["x", "y"], [0.1, 0.19])) == [False, False]
    assert model.runs == []


def test_either_reader_takes_a_request_and_the_second_reads_only_what_the_first_left() -> None:
    english = ScriptedModel({"a": 0.9, "b": 0.1, "c": 0.1, "d": 0.1})
    other = ScriptedModel({"b": 0.8, "c": 0.2, "d": 0.9})
    either = EitherReader(
        (ForgetReader(english, reader_min=0.5, gate=0.2), ForgetReader(other, 0.5, gate=0.6))
    )

    asked = asyncio.run(either.requests(["a", "b", "c", "d"], [0.9, 0.7, 0.7, 0.3]))

    # "d" is under the second reader's own gate, "c" under its threshold.
    assert asked == [True, True, False, False]
    assert [r[0][1] for r in other.runs] == ["b", "c"]  # never "a", taken by the first


def test_the_judge_with_a_reader_asks_it_and_keeps_the_flags_probability() -> None:
    heads = Heads.load(PACKAGED_HEADS, None)
    said = [
        "Please delete my home address from your records.",
        "My wife asked her bank to delete her details.",
    ]
    model = ScriptedModel({said[0]: 0.95, said[1]: 0.05})
    with_reader = LearnedJudge(OnnxEmbedder(), heads, forget_reader=ForgetReader(model, 0.5, 0.05))
    alone = LearnedJudge(OnnxEmbedder(), heads)

    read = asyncio.run(with_reader.judge(said))
    flag = asyncio.run(alone.judge(said))

    assert [j.forget_request for j in read] == [True, False]
    assert [j.forget_p for j in read] == [j.forget_p for j in flag]
    assert flag[0].forget_request


def test_a_file_that_does_not_carry_its_gate_is_refused(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["ids"], ["p"])],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, 3])],
    )
    model = helper.make_model(graph)
    for key, value in (("yes_min", "0.500"), ("classes", "yes,no,neither"), ("trained", "{}")):
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    path = tmp_path / "reader.onnx"
    onnx.save(model, str(path))

    with pytest.raises(ForgetReaderIntegrityError, match="gate"):
        ForgetReader.load(path, None)


def test_the_packaged_reader_carries_the_threshold_and_gate_it_is_pinned_with() -> None:
    loaded = ForgetReader.load(PACKAGED_FORGET_READER, PACKAGED_FORGET_READER_SHA256)
    assert (loaded.reader_min, loaded.gate) == (
        PACKAGED_FORGET_READER_MIN,
        PACKAGED_FORGET_READER_GATE,
    )
    packaged = ForgetReader.packaged()
    said = [
        "Please delete my home address from your records.",
        "My wife asked her bank to delete her details.",
    ]
    assert packaged.probabilities_sync(said) == loaded.probabilities_sync(said)


def test_the_packaged_multilingual_reader_carries_its_pinned_bars_and_reads_other_languages() -> (
    None
):
    loaded = ForgetReader.load(PACKAGED_MULTILINGUAL_READER, PACKAGED_MULTILINGUAL_READER_SHA256)
    assert (loaded.reader_min, loaded.gate) == (
        PACKAGED_MULTILINGUAL_READER_MIN,
        PACKAGED_MULTILINGUAL_READER_GATE,
    )
    packaged = ForgetReader.packaged_multilingual()
    said = [
        "Por favor, borra mi antigua dirección de tu ficha.",  # the English reader: 0.01
        "Mi hermana pidió a su banco que borrara sus datos.",
    ]
    read = packaged.probabilities_sync(said)
    assert read == loaded.probabilities_sync(said)
    assert read[0] >= PACKAGED_MULTILINGUAL_READER_MIN > read[1]


def test_a_packaged_reader_that_differs_from_its_pin_fails_its_first_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from factledger.adapters.judgement import forget_reader

    altered = tmp_path / "reader.onnx"
    altered.write_bytes(PACKAGED_FORGET_READER.read_bytes() + b"\0")
    monkeypatch.setattr(forget_reader, "PACKAGED_FORGET_READER", altered)
    reader = ForgetReader.packaged()  # a start reads nothing of the file
    with pytest.raises(ModelUnavailableError) as raised:
        asyncio.run(reader.requests(["Please delete my number."], [0.9]))
    assert isinstance(raised.value.__cause__, ForgetReaderIntegrityError)
    assert "sha256 differs" in str(raised.value.__cause__)


@pytest.mark.parametrize(
    ("pinned", "said", "flag_reads_it"),
    [
        ("PACKAGED_FORGET_READER", "Please delete my home address from your records.", True),
        # The English reader leaves the Spanish request to the multilingual one; the flag
        # alone reads it under its own bar (0.61 against 0.72).
        (
            "PACKAGED_MULTILINGUAL_READER",
            "Por favor, borra mi antigua dirección de tu ficha.",
            False,
        ),
    ],
)
def test_a_reader_that_cannot_load_leaves_the_flag_alone_and_says_why(
    pinned: str,
    said: str,
    flag_reads_it: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from structlog.testing import capture_logs

    from factledger.adapters.judgement import forget_reader

    shipped: Path = getattr(forget_reader, pinned)
    altered = tmp_path / f"reader{shipped.suffix}"
    altered.write_bytes(shipped.read_bytes()[:1000])
    monkeypatch.setattr(forget_reader, pinned, altered)
    heads = Heads.load(PACKAGED_HEADS, None)
    broken = LearnedJudge(OnnxEmbedder(), heads, forget_reader=EitherReader.packaged())
    alone = LearnedJudge(OnnxEmbedder(), heads)
    lines = [said, "We moved the office to Lyon in March."]

    with capture_logs() as logs:
        read = asyncio.run(broken.judge(lines))

    assert [j.forget_request for j in read] == [
        j.forget_request for j in asyncio.run(alone.judge(lines))
    ]
    assert read[0].forget_request is flag_reads_it
    assert [e["error_type"] for e in logs if e["event"] == "forget_reader_unavailable"] == [
        "ForgetReaderIntegrityError"
    ]
    assert not any(said in str(e) for e in logs)  # logs never carry what was said


def test_the_shipped_readers_together_notice_a_request_the_english_one_misses() -> None:
    heads = Heads.load(PACKAGED_HEADS, None)
    said = [
        "Por favor, borra mi antigua dirección de tu ficha.",
        "Mi hermana pidió a su banco que borrara sus datos.",
        "Please delete my home address from your records.",
    ]
    both = LearnedJudge(OnnxEmbedder(), heads, forget_reader=EitherReader.packaged())
    english = LearnedJudge(OnnxEmbedder(), heads, forget_reader=ForgetReader.packaged())

    assert [j.forget_request for j in asyncio.run(both.judge(said))] == [True, False, True]
    assert [j.forget_request for j in asyncio.run(english.judge(said))] == [False, False, True]
