"""The span tagger: token states over the packaged encoder, the fit, and the spans it reads."""

from __future__ import annotations

import numpy as np
import pytest

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.token_states import TokenStates
from factledger.adapters.judgement.spans import LineReading, span_scores, spans_of
from factledger.bench.judgement.fit import fit_span_head
from factledger.bench.judgement.span_data import LineExample


@pytest.mark.asyncio
async def test_token_states_cover_the_text_alone_with_its_offsets() -> None:
    embedder = OnnxEmbedder()
    text = "we run TrackPilot, 14 dispatchers"

    (alone, asked) = await embedder.token_states([(text, None), (text, "How big is the team?")])

    for states in (alone, asked):
        pieces = [text[a:b] for a, b in states.offsets]
        assert "".join(pieces) == text.replace(" ", "")
        assert states.states.shape == (len(pieces), embedder.dimension)
        assert np.allclose(np.linalg.norm(states.states, axis=1), 1.0, atol=1e-4)
    assert alone.offsets.tolist() == asked.offsets.tolist()
    assert not np.allclose(alone.states, asked.states)  # the question is read as context


def _tokens(offsets: list[list[int]]) -> TokenStates:
    n = len(offsets)
    return TokenStates(
        np.zeros((n, 2), np.float32), np.array(offsets, np.int64), np.arange(n, dtype=np.int64)
    )


def test_a_one_letter_run_is_no_value() -> None:
    p = np.array([[0.9], [0.1]], dtype=np.float32)

    assert spans_of("a bc", p, _tokens([[0, 1], [2, 4]]), token_min=0.5) == []


def test_spans_are_the_runs_a_field_wins_widened_to_whole_words() -> None:
    text = "a CX-5 b c dd"
    tokens = _tokens([[0, 1], [2, 4], [4, 6], [7, 8], [11, 13]])  # a, CX, -5, b, dd
    p = np.array([[0.1, 0.0], [0.9, 0.0], [0.2, 0.1], [0.8, 0.0], [0.0, 0.7]], dtype=np.float32)

    spans = spans_of(text, p, tokens, token_min=0.5)

    assert [(s.field, text[s.start : s.end]) for s in spans] == [(0, "CX-5 b"), (1, "dd")]
    assert spans[0].p == pytest.approx(float(p[1:4, 0].mean()))


def _line(case: int, value_field: int | None, rng: np.random.Generator) -> LineExample:
    """Six tokens, two fields; tokens 2-3 state `value_field` (a high first pair feature),
    the others nothing."""
    pairs = rng.normal(0.0, 0.3, size=(6, 2, 3)).astype(np.float32)
    tokens = rng.normal(0.0, 0.3, size=(6, 2)).astype(np.float32)
    states = np.zeros((6, 2), dtype=bool)
    if value_field is not None:
        pairs[2:4, value_field, 0] += 2.0
        tokens[2:4, 0] += 1.0
        states[2:4, value_field] = True
    return LineExample(case, pairs, tokens, states, np.ones(6, dtype=bool))


def test_the_fit_gives_a_value_s_tokens_to_its_field_and_the_rest_to_none() -> None:
    rng = np.random.default_rng(5)
    examples = [_line(i, [None, 0, 1][i % 3], rng) for i in range(150)]

    head = fit_span_head(examples)

    probe = _line(0, 1, rng)
    p = span_scores(head.weights, head.bias, LineReading(probe.pairs, probe.tokens))
    assert p.shape == (6, 2)
    assert np.all(p[2:4, 1] > 0.6)
    assert np.all(p[[0, 1, 4, 5]].max(axis=1) < 0.4)
