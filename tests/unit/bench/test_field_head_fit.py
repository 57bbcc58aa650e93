"""The field head's fit: a softmax per clause over its kind's fields and "none"."""

from __future__ import annotations

import numpy as np

from factledger.adapters.judgement.fields import field_probabilities
from factledger.bench.judgement.field_data import ClauseExample
from factledger.bench.judgement.fit import fit_field_head


def _clause(case: int, stated: int | None, rng: np.random.Generator) -> ClauseExample:
    """Three fields; the pair of the stated field has a high first feature, the others not."""
    pairs = rng.normal(0.0, 0.3, size=(3, 4)).astype(np.float32)
    states = np.zeros(3, dtype=bool)
    if stated is not None:
        pairs[stated, 0] += 2.0
        states[stated] = True
    return ClauseExample(case, pairs, states)


def test_the_head_puts_a_clause_on_the_field_it_states_or_on_none() -> None:
    rng = np.random.default_rng(3)
    examples = [_clause(i, [None, 0, 1, 2][i % 4], rng) for i in range(200)]

    head = fit_field_head(examples)

    stated = _clause(0, 2, rng)
    none = _clause(0, None, rng)
    p = field_probabilities(head.weights, head.bias, np.stack([stated.pairs, none.pairs]))
    assert p.shape == (2, 3)
    assert int(np.argmax(p[0])) == 2
    assert p[0, 2] > 0.6
    assert p[1].max() < 0.4  # "none" takes the rest
    assert np.all(p.sum(axis=1) < 1.0)


def test_probabilities_of_a_kind_with_no_fields_are_empty() -> None:
    weights, bias = np.zeros((4, 1), np.float32), np.zeros(1, np.float32)

    assert field_probabilities(weights, bias, np.zeros((2, 0, 4), np.float32)).shape == (2, 0)
