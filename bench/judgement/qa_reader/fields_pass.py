"""Every field of a line read in one pass: `[CLS] [F] name [F] job title ... [SEP] line [SEP]
agent's line [SEP]`, each field's `[F]` marker state scoring every token of the line as its
value's start and end (`[CLS]`: no value). The inputs are the product's
(`adapters/judgement/qa_reader/inputs.py`, which reads the exported reader); here they get
each field's gold span for training.

The per-field question (`tokens.PairTokens`) reads a line once per field: ten passes a line,
which on two shared cores was too slow to see even one epoch (docs/benchmarks.md, issue 28,
QA reader). One pass a line asks the same question of every field at once, and the fields
compete for the line's words inside the pass, which is the choice the earlier encoder never
learnt. The order of the fields is shuffled in training so that a place in the list means no
field.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from tokenizers import Tokenizer

from factledger.adapters.judgement.qa_reader.inputs import (
    MAX_TOKENS,
    field_positions,
    line_windows,
)
from factledger.bench.judgement.qa_reader.pairs import QaPair
from factledger.bench.judgement.qa_reader.tokens import _gold


@dataclass(frozen=True, slots=True)
class FieldAsked:
    field: str
    is_list: bool
    spans: tuple[tuple[int, int], ...]
    flags: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class LineEncoded:
    ids: tuple[int, ...]
    types: tuple[int, ...]
    markers: tuple[int, ...]  # position of each field's marker, in `fields` order
    fields: tuple[FieldAsked, ...]
    first_line_token: int
    offsets: tuple[tuple[int, int], ...]
    starts: tuple[tuple[int, ...], ...]  # per field, gold start positions (empty: none)
    ends: tuple[tuple[int, ...], ...]


def fields_of_lines(pairs: Sequence[QaPair]) -> list[tuple[QaPair, list[FieldAsked]]]:
    """Pairs grouped back by line: (a pair of the line, every field asked of it)."""
    grouped: dict[tuple[str, int, int], tuple[QaPair, list[FieldAsked]]] = {}
    for p in pairs:
        key = (p.asked.case_id, p.asked.session, p.asked.line)
        grouped.setdefault(key, (p, []))[1].append(FieldAsked(p.field, p.is_list, p.spans, p.flags))
    return list(grouped.values())


@dataclass(frozen=True, slots=True)
class FieldsTokens:
    tokenizer: Tokenizer
    max_tokens: int = MAX_TOKENS

    def encode(
        self, fields: Sequence[FieldAsked], line: str, agent: str, chance: random.Random | None
    ) -> list[LineEncoded]:
        order = list(fields)
        if chance is not None:
            chance.shuffle(order)
        out = []
        for w in line_windows(self.tokenizer, [f.field for f in order], line, agent,
                              self.max_tokens):  # fmt: skip
            gold = [_gold(f.spans, w.offsets, w.first_line_token) for f in order]
            out.append(
                LineEncoded(
                    w.ids,
                    w.types,
                    w.markers,
                    tuple(order),
                    w.first_line_token,
                    w.offsets,
                    tuple(g[0] for g in gold),
                    tuple(g[1] for g in gold),
                )
            )
        return out


def field_word_positions(encoded: LineEncoded) -> tuple[tuple[int, ...], ...]:
    """Per field (in `encoded.fields` order): its marker's position and its words'."""
    return field_positions(encoded.markers, encoded.first_line_token)
