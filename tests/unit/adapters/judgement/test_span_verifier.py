"""The span verifier (ADR 0239): what it reads of an answer, its log-odds, each pair read
alone whatever is read beside it, a graph read only when it names its outputs, and a pinned
graph checked at start only for being there, read after. The graph read here is the packaged
forget reader's (the same tokenizer, the same three outputs). Lines written for this test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from factledger.adapters.judgement.cross_answers import CrossEncoderIntegrityError
from factledger.adapters.judgement.forget_reader import (
    PACKAGED_FORGET_READER,
    PACKAGED_FORGET_READER_SHA256,
)
from factledger.adapters.judgement.span_verifier import (
    PinnedVerifier,
    SpanVerifier,
    log_odds,
    verifier_pair,
)
from factledger.application.errors import ModelUnavailableError


def test_it_reads_the_field_the_agents_question_and_the_span_in_brackets() -> None:
    assert verifier_pair(
        "home_address", "14 Elm Street", "We moved to 14 Elm Street in May", "Where do you live?"
    ) == ("home address | Where do you live?", "We moved to [14 Elm Street] in May")


def test_a_span_the_line_does_not_hold_as_read_follows_it_in_brackets() -> None:
    # A span widened across a joining character may not be the line's characters as written.
    assert verifier_pair("home_address", "Elm St", "No agent line here", "") == (
        "home address",
        "No agent line here [Elm St]",
    )


def test_a_long_agent_line_is_read_by_its_end_where_its_question_is() -> None:
    first, _ = verifier_pair("home_address", "Elm", "Elm", "x" * 500 + " And your address?")

    assert first.endswith(" And your address?")
    assert len(first) < 250


def test_log_odds_are_clipped_where_a_reading_is_sure() -> None:
    odds = log_odds(np.array([0.0, 0.5, 0.9, 1.0]))

    assert odds[1] == 0.0
    assert odds[2] == pytest.approx(np.log(9.0))
    assert odds[0] == pytest.approx(-odds[3]) == pytest.approx(-np.log(9999.0))


def test_each_pair_reads_the_same_alone_or_beside_others() -> None:
    verifier = SpanVerifier.load(PACKAGED_FORGET_READER, PACKAGED_FORGET_READER_SHA256)
    pairs = [
        verifier_pair("allergies", "latex", "Only latex, as far as I know.", "Any allergies?"),
        verifier_pair("diet", "vegan", "My sister went vegan last year, not me.", ""),
    ]

    together = verifier.yes_sync(pairs)

    assert together.tolist() == [verifier.yes_sync([p])[0] for p in pairs]
    assert ((together > 0) & (together < 1)).all()
    assert verifier.log_odds_sync(pairs).tolist() == log_odds(together).tolist()
    assert verifier.yes_sync([]).shape == (0,)


def test_a_graph_that_does_not_name_its_outputs_is_refused() -> None:
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "unnamed",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    raw = helper.make_model(graph).SerializeToString()
    onnx.checker.check_model(onnx.load_model_from_string(raw))

    with pytest.raises(CrossEncoderIntegrityError, match="does not name its outputs"):
        SpanVerifier.of(raw)
    with pytest.raises(CrossEncoderIntegrityError, match="not an ONNX model"):
        SpanVerifier.of(b"\xff not a graph")


def test_a_pinned_graph_is_checked_at_start_only_for_being_there(tmp_path: Path) -> None:
    with pytest.raises(CrossEncoderIntegrityError, match="missing"):
        PinnedVerifier(tmp_path / "gone.onnx", "0" * 64)
    graph = tmp_path / "verifier.onnx"
    graph.write_bytes(PACKAGED_FORGET_READER.read_bytes())
    pair = [verifier_pair("diet", "vegan", "I'm vegan these days.", "Any dietary needs?")]

    pinned = PinnedVerifier(graph, PACKAGED_FORGET_READER_SHA256)
    wrong_pin = PinnedVerifier(graph, "0" * 64)  # read only when first needed

    direct = SpanVerifier.load(PACKAGED_FORGET_READER, PACKAGED_FORGET_READER_SHA256)
    assert pinned.log_odds_sync(pair).tolist() == direct.log_odds_sync(pair).tolist()
    with pytest.raises(ModelUnavailableError):
        wrong_pin.log_odds_sync(pair)
