"""Which profile field a clause the subject said states, for any configured schema.

The field head compares a clause with every field of its kind at once: each (clause, field)
pair gets a score, and a softmax over the kind's fields and "none of them" says which field
the clause states, if any. A clause that speaks of the location is then not also offered as
the number of bedrooms because both are somewhat similar to it.

Each pair is described by how the clause and the agent's question before it compare with the
field's name in the embedder's space (similarities, margins over the other fields, which field
ranks first), what the statement head says of the clause (about the subject, someone else,
small talk, a question; a request to forget) and a few shape cues (digits, capitals, length).
The field head, trained on labelled conversations, turns that into each pair's score. Nothing
in it names a field, so a kind configured with bare-typed fields nobody trained on is read
the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from factledger.adapters.judgement.features import Matrix

# A full stop or comma inside a number ("40,000", "4.2.1") does not end a clause.
_CLAUSE_END = re.compile(r"(?:[!?;:()\n]+|\.(?!\d)|,(?!\d)|\s[-\u2013\u2014]\s)\s*")
_WORD = re.compile(r"\w+")
SCALARS = 18


def clauses_of(text: str) -> list[str]:
    """The clauses of a message: cut at sentence ends, commas, colons, dashes."""
    return [c.strip() for c in _CLAUSE_END.split(text) if c and _WORD.search(c)]


def field_text(name: str) -> str:
    return name.replace("_", " ")


def _margins(sim: Matrix) -> tuple[Matrix, Matrix]:
    """Per pair: the similarity minus the best other field's, and whether it ranks first."""
    n_fields = sim.shape[1]
    if n_fields == 1:
        return np.zeros_like(sim), np.ones_like(sim)
    order = np.sort(sim, axis=1)
    best, second = order[:, -1:], order[:, -2:-1]
    other_best = np.where(sim >= best, second, best)
    return sim - other_best, (sim >= best).astype(np.float32)


def pair_features(
    clauses: Sequence[str],
    clause_vecs: Matrix,
    question_vecs: Matrix,
    has_question: Matrix,
    field_vecs: Matrix,
    statement_p: Matrix,
    forget_p: Matrix,
) -> Matrix:
    """(clauses x fields x pair_width(dimension)) features of every pair: the scalars above,
    then the elementwise products of the field's vector with the clause's and the question's,
    which let the head learn which directions of meaning tell a statement of a field apart
    without naming any field."""
    s = clause_vecs @ field_vecs.T
    q = (question_vecs @ field_vecs.T) * has_question[:, None]
    s_margin, s_first = _margins(s)
    q_margin, q_first = _margins(q)
    cq = np.sum(clause_vecs * question_vecs, axis=1) * has_question
    shape = np.array(
        [
            [
                float(any(ch.isdigit() for ch in c)),
                min(len(_WORD.findall(c)), 20) / 20.0,
                sum(w[0].isupper() for w in _WORD.findall(c)) / max(len(_WORD.findall(c)), 1),
            ]
            for c in clauses
        ],
        dtype=np.float32,
    ).reshape(len(clauses), 3)
    n, f = s.shape
    per_clause = np.hstack(
        [statement_p, forget_p[:, None], shape, cq[:, None], has_question[:, None]]
    )  # 4 + 1 + 3 + 1 + 1 = 10
    d = clause_vecs.shape[1]
    out = np.zeros((n, f, pair_width(d)), dtype=np.float32)
    out[:, :, 0], out[:, :, 1], out[:, :, 2], out[:, :, 3] = s, q, s_margin, q_margin
    out[:, :, 4], out[:, :, 5], out[:, :, 6], out[:, :, 7] = s_first, q_first, s * q, s + q
    out[:, :, 8:SCALARS] = per_clause[:, None, :]
    # Scaled by sqrt(d) so each product is of the scalars' order (a unit vector's components
    # are about 1/sqrt(d)), else the head's regularisation leaves them unused.
    scale = np.float32(np.sqrt(d))
    out[:, :, SCALARS : SCALARS + d] = scale * clause_vecs[:, None, :] * field_vecs[None, :, :]
    question = question_vecs * has_question[:, None]
    out[:, :, SCALARS + d :] = scale * question[:, None, :] * field_vecs[None, :, :]
    return out


def pair_width(dimension: int) -> int:
    return SCALARS + 2 * dimension


def field_probabilities(weights: Matrix, bias: Matrix, pairs: Matrix) -> Matrix:
    """(clauses x fields) probabilities that each clause states each field: a softmax per
    clause over its fields' scores (`pairs @ weights + bias`) and "none", whose score is 0."""
    n, f, width = pairs.shape
    z = (pairs.reshape(n * f, width) @ weights[:, 0] + bias[0]).reshape(n, f)
    top = np.maximum(z.max(axis=1, keepdims=True), 0.0) if f else np.zeros((n, 1), np.float32)
    e = np.exp(z - top)
    p: Matrix = e / (np.exp(-top) + e.sum(axis=1, keepdims=True))
    return p
