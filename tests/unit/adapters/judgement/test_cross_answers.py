"""The answer cross-encoder's loader and reader: a file is read only once its SHA-256 is the
pinned one and it names its outputs and threshold; the pair reaches the model as one input,
question then reply; a yes needs the threshold. A tiny model built here stands in for the
shipped one where the check is the loader's, not the model's."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from factledger.adapters.embedding.onnx.model_files import TOKENIZER
from factledger.adapters.judgement.cross_answers import (
    CLASSES,
    CrossAnswerJudge,
    CrossEncoderIntegrityError,
    decide,
    pair_inputs,
    pair_tokenizer,
)
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.api.bootstrap.judgement import answer_judge
from factledger.api.settings.extraction import ExtractionSettings, RuleExtractorSettings
from factledger.application.judgement.types import Reply

VOCAB = 30522


def _token(word: str) -> int:
    token_id = pair_tokenizer(TOKENIZER.read_bytes()).token_to_id(word)
    assert token_id is not None
    return int(token_id)


def tiny_model(path: Path, metadata: dict[str, str], yes_word: str = "yes") -> str:
    """A graph with the shipped model's inputs and output: each class's score is the sum
    over the reply's tokens (segment 1) of a table's row, so "yes" in the reply reads as a
    yes, "no" as a no, and the same words in the question count for nothing."""
    table = np.zeros((VOCAB, 3), dtype=np.float32)
    table[_token(yes_word), 0] = 4.0
    table[_token("no"), 1] = 4.0
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["rows"]),
        helper.make_node("Cast", ["types"], ["seg"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["mask"], ["on"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["seg", "on"], ["reply"]),
        helper.make_node("Unsqueeze", ["reply", "last"], ["weight"]),
        helper.make_node("Mul", ["rows", "weight"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", "tokens"], ["score"], keepdims=0),
        helper.make_node("Softmax", ["score"], ["p"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny",
        [
            helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
            for n in ("ids", "mask", "types")
        ],
        [helper.make_tensor_value_info("p", TensorProto.FLOAT, ["batch", 3])],
        [
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "last"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "tokens"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def model_file(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "answers.onnx"
    return path, tiny_model(path, {"yes_min": "0.9", "classes": ",".join(CLASSES)})


def test_a_file_that_differs_from_its_pin_is_refused_before_it_is_read(
    model_file: tuple[Path, str], tmp_path: Path
) -> None:
    path, sha256 = model_file
    CrossAnswerJudge.load(path, sha256)  # the pinned file loads
    with pytest.raises(CrossEncoderIntegrityError, match="sha256 differs"):
        CrossAnswerJudge.load(path, "0" * 64)
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"not a model")
    with pytest.raises(CrossEncoderIntegrityError, match="sha256 differs"):
        CrossAnswerJudge.load(garbage, sha256)
    with pytest.raises(CrossEncoderIntegrityError, match="not readable"):
        CrossAnswerJudge.load(tmp_path / "absent.onnx", None)


def test_a_file_that_does_not_name_its_outputs_and_threshold_is_refused(tmp_path: Path) -> None:
    for metadata in ({"classes": ",".join(CLASSES)}, {"yes_min": "0.9", "classes": "no,yes"}):
        path = tmp_path / "unnamed.onnx"
        sha256 = tiny_model(path, metadata)
        with pytest.raises(CrossEncoderIntegrityError, match="does not name"):
            CrossAnswerJudge.load(path, sha256)


def test_the_pair_is_one_input_question_then_reply() -> None:
    tokenizer = pair_tokenizer(TOKENIZER.read_bytes())
    ids, mask, types = pair_inputs(
        tokenizer, [("Is it right?", "yes"), ("Still there?", "no, moved")]
    )
    first = tokenizer.id_to_token
    assert [first(int(i)) for i in ids[0][: int(mask[0].sum())]] == [
        "[CLS]",
        "is",
        "it",
        "right",
        "?",
        "[SEP]",
        "yes",
        "[SEP]",
    ]
    assert types[0][: int(mask[0].sum())].tolist() == [0, 0, 0, 0, 0, 0, 1, 1]
    assert ids.shape == mask.shape == types.shape
    assert mask[0].sum() < mask[1].sum()


async def test_the_reply_is_read_beside_its_question(model_file: tuple[Path, str]) -> None:
    judge = CrossAnswerJudge.load(*model_file)
    assert judge.yes_min == pytest.approx(0.9)
    replies = await judge.answers(
        [
            ("Is it the blue plan?", "yes"),
            ("Is it the blue plan?", "no"),
            ("Yes or no: is it the blue plan?", "maybe"),  # the question's words count for nothing
        ]
    )
    assert replies == [Reply.YES, Reply.NO, Reply.NEITHER]
    assert await judge.answers([]) == []


def test_a_likeliest_yes_below_the_threshold_is_neither_not_no() -> None:
    p = np.array([[0.95, 0.03, 0.02], [0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.2, 0.3, 0.5]])
    assert decide(p.astype(np.float32), 0.9) == [Reply.YES, Reply.NEITHER, Reply.NO, Reply.NEITHER]


async def test_a_deployments_own_cross_encoder_is_used_only_when_it_matches_its_pin(
    model_file: tuple[Path, str],
) -> None:
    path, sha256 = model_file
    pinned = ExtractionSettings(answer_head_path=path, answer_head_sha256=sha256)
    judge = answer_judge(RuleExtractorSettings(), pinned)
    assert isinstance(judge, LearnedJudge)
    assert isinstance(judge.pair_answers, CrossAnswerJudge)
    assert judge.reply_head_agrees  # its yes needs the reply-only head's too
    # The tiny model's yes with the reply-only head's: confirmed; its no: declined.
    pairs = [("Is your monthly budget still 2,000 euros?", "yes"), ("Still Basic?", "no")]
    assert await judge.answers(pairs) == [Reply.YES, Reply.NO]
    wrong = ExtractionSettings(answer_head_path=path, answer_head_sha256="1" * 64)
    assert answer_judge(RuleExtractorSettings(), wrong) is None
