"""Every field of a line read in one pass: `[CLS] [F] name [F] job title ... [SEP] line [SEP]
agent's line [SEP]`, each field's `[F]` marker state scoring every token of the line as its
value's start and end (`[CLS]`: no value).

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

from factledger.bench.judgement.qa_reader.pairs import QaPair
from factledger.bench.judgement.qa_reader.questions import field_words
from factledger.bench.judgement.qa_reader.tokens import _gold, _special_id, _windows

MAX_TOKENS = 128
MAX_AGENT = 20
MARKER = "[unused1]"


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
        cls, sep, mark = (_special_id(self.tokenizer, t) for t in ("[CLS]", "[SEP]", MARKER))
        prefix: list[int] = [cls]
        markers = []
        for f in order:
            markers.append(len(prefix))
            prefix += [
                mark,
                *self.tokenizer.encode(field_words(f.field), add_special_tokens=False).ids,
            ]
        prefix.append(sep)
        said = self.tokenizer.encode(line, add_special_tokens=False)
        a = self.tokenizer.encode(agent, add_special_tokens=False).ids[-MAX_AGENT:] if agent else []
        room = self.max_tokens - len(prefix) - 2
        width = max(8, min(len(said.ids), room))
        a = a[max(0, len(a) - max(0, room - width)) :] if room - width > 0 else []
        out = []
        for begin in _windows(len(said.ids), width):
            offsets = tuple((int(x), int(y)) for x, y in said.offsets[begin : begin + width])
            first = len(prefix)
            gold = [_gold(f.spans, offsets, first) for f in order]
            body = [*said.ids[begin : begin + width], sep, *([*a, sep] if a else [])]
            ids = (*prefix, *body)
            types = (0,) * len(prefix) + (1,) * len(body)
            out.append(
                LineEncoded(
                    ids,
                    types,
                    tuple(markers),
                    tuple(order),
                    first,
                    offsets,
                    tuple(g[0] for g in gold),
                    tuple(g[1] for g in gold),
                )
            )
        return out


def field_word_positions(encoded: LineEncoded) -> tuple[tuple[int, ...], ...]:
    """Per field (in `encoded.fields` order): its marker's position and its words'."""
    ends = (*encoded.markers[1:], encoded.first_line_token - 1)  # the next marker, or [SEP]
    return tuple(tuple(range(m, end)) for m, end in zip(encoded.markers, ends, strict=True))
