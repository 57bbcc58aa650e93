"""Training and reading with one pass per line (`fields_pass`): tensors, loss, answers."""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch
from torch.nn import functional

from factledger.adapters.judgement.qa_reader.decode import answers
from factledger.bench.judgement.qa_reader.fields_pass import (
    FieldAsked,
    FieldsTokens,
    LineEncoded,
    field_word_positions,
    fields_of_lines,
)
from factledger.bench.judgement.qa_reader.model import FieldsReader, QaReader
from factledger.bench.judgement.qa_reader.pairs import LineAsked, QaPair
from factledger.bench.judgement.qa_reader.scoring import Read
from factledger.bench.judgement.qa_reader.train import FLAG_WEIGHT

NO = -1e4


def line_examples(pairs: Sequence[QaPair], tokens: FieldsTokens, seed: int) -> list[LineEncoded]:
    chance = random.Random(seed)
    return [
        window
        for first, fields in fields_of_lines(pairs)
        for window in tokens.encode(fields, first.asked.text, first.asked.agent_before, chance)
    ]


def line_length(example: LineEncoded) -> int:
    return len(example.ids)


def line_inputs(batch: Sequence[LineEncoded]) -> dict[str, torch.Tensor]:
    width = max(len(e.ids) for e in batch)
    fields = max(len(e.markers) for e in batch)
    b = len(batch)
    ids = torch.zeros((b, width), dtype=torch.long)
    types = torch.zeros_like(ids)
    attention = torch.zeros_like(ids)
    markers = torch.zeros((b, fields), dtype=torch.long)
    asked = torch.zeros((b, fields), dtype=torch.bool)
    answerable = torch.zeros((b, width), dtype=torch.bool)
    pool = torch.zeros((b, fields, width))
    for row, e in enumerate(batch):
        for f, positions in enumerate(field_word_positions(e)):
            pool[row, f, list(positions)] = 1.0 / len(positions)
        n = len(e.ids)
        ids[row, :n] = torch.tensor(e.ids)
        types[row, :n] = torch.tensor(e.types)
        attention[row, :n] = 1
        markers[row, : len(e.markers)] = torch.tensor(e.markers)
        asked[row, : len(e.markers)] = True
        answerable[row, 0] = True
        answerable[row, e.first_line_token : e.first_line_token + len(e.offsets)] = True
    return {"ids": ids, "types": types, "attention": attention, "markers": markers,
            "asked": asked, "answerable": answerable, "pool": pool}  # fmt: skip


def _gold(batch: Sequence[LineEncoded], shape: tuple[int, ...], ends: bool) -> torch.Tensor:
    gold = torch.zeros(shape, dtype=torch.bool)
    for row, e in enumerate(batch):
        for f, positions in enumerate(e.ends if ends else e.starts):
            for p in positions or (0,):
                gold[row, f, p] = True
    return gold


def _span_loss(
    scores: torch.Tensor,
    gold: torch.Tensor,
    allowed: torch.Tensor,
    weights: torch.Tensor,
    each: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per field, the gold positions' summed probability; where `each` (a field per row)
    holds, each gold position's own (`item_loss`)."""
    masked = scores.float().masked_fill(~allowed[:, None, :], NO)
    log_p = functional.log_softmax(masked, dim=-1)
    per_field = -torch.logsumexp(log_p.masked_fill(~gold, NO), dim=-1)
    if each is not None and bool(each.any()):
        per_field = torch.where(each, item_loss(masked, gold), per_field)
    return (per_field * weights).sum() / weights.sum().clamp(min=1e-6)


def item_loss(masked: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """Each gold position against the positions that are no gold (`[CLS]`, "no value",
    among them) alone, averaged over the field's gold positions (ADR 0139). In one softmax
    a line of k items gives each about 1/k of the mass, so each item's span lies about
    2 log k lower over "no value" than a line's one value (ADR 0129); here the other items
    are left out of an item's denominator, and an item's score over "no value" means what a
    single value's does. One gold position (a single value, or "no value") gives the same
    loss as the shared softmax."""
    rest = torch.logsumexp(masked.masked_fill(gold, NO), dim=-1, keepdim=True)
    own = masked - torch.logaddexp(masked, rest)
    return -own.masked_fill(~gold, 0.0).sum(dim=-1) / gold.sum(dim=-1).clamp(min=1)


def list_fields(batch: Sequence[LineEncoded], shape: tuple[int, ...]) -> torch.Tensor:
    each = torch.zeros(shape, dtype=torch.bool)
    for row, e in enumerate(batch):
        for f, asked in enumerate(e.fields):
            each[row, f] = asked.is_list
    return each


def field_weights(stated: torch.Tensor, asked: torch.Tensor, no_answer: float) -> torch.Tensor:
    """Each asked field's share of the span loss: 1 where the line states it, `no_answer`
    where it does not. Most fields of a line state nothing; at full weight that prior wins
    the first epochs and every field answers "no value" (ADR 0089, 0106)."""
    return torch.where(stated, 1.0, no_answer) * asked.float()


def line_loss(
    reader: QaReader,
    batch: Sequence[LineEncoded],
    no_answer: float = 1.0,
    *,
    list_items: bool = False,
) -> torch.Tensor:
    """Span loss per asked field (no-value fields weighted by `no_answer`), plus the flags
    of the stated fields; with `list_items`, a list field's items each on their own
    (`item_loss`, ADR 0139)."""
    if not isinstance(reader, FieldsReader):
        raise TypeError("a line's fields are read by a FieldsReader")
    x = line_inputs(batch)
    start, end, flags = reader.read(x["ids"], x["types"], x["attention"], x["markers"], x["pool"])
    stated = torch.zeros(x["asked"].shape, dtype=torch.bool)
    truth = torch.zeros(flags.shape)
    for row, e in enumerate(batch):
        for f, asked in enumerate(e.fields):
            if e.starts[f]:
                stated[row, f] = True
                truth[row, f] = torch.tensor([float(v) for v in asked.flags])
    weights = field_weights(stated, x["asked"], no_answer)
    each = list_fields(batch, tuple(x["asked"].shape)) if list_items else None
    loss = _span_loss(
        start, _gold(batch, tuple(start.shape), ends=False), x["answerable"], weights, each
    )
    loss = loss + _span_loss(
        end, _gold(batch, tuple(end.shape), ends=True), x["answerable"], weights, each
    )
    if bool(stated.any()):
        flag_loss = functional.binary_cross_entropy_with_logits(
            flags[stated].float(), truth[stated]
        )
        loss = loss + FLAG_WEIGHT * flag_loss
    return loss


def read_lines(
    reader: FieldsReader,
    tokens: FieldsTokens,
    lines: Sequence[tuple[LineAsked, Sequence[FieldAsked]]],
    *,
    floor: float,
    batch: int = 16,
) -> list[Read]:
    """Each line read once for all its fields; answers down to `floor`."""
    items = [
        (asked, window)
        for asked, fields in lines
        for window in tokens.encode(fields, asked.text, asked.agent_before, None)
    ]
    items.sort(key=lambda item: len(item[1].ids))
    reads: list[Read] = []
    reader.eval()
    with torch.no_grad():
        for begin in range(0, len(items), batch):
            chunk = items[begin : begin + batch]
            x = line_inputs([w for _, w in chunk])
            start, end, _ = reader.read(
                x["ids"], x["types"], x["attention"], x["markers"], x["pool"]
            )
            for row, (asked, w) in enumerate(chunk):
                n = len(w.ids)
                for f, field in enumerate(w.fields):
                    found = answers(start[row, f, :n].numpy(), end[row, f, :n].numpy(),
                                    w.first_line_token, w.offsets, asked.text,
                                    margin=floor, many=field.is_list)  # fmt: skip
                    reads.extend(
                        Read(asked.case_id, asked.session, asked.line, field.field, a.start,
                             a.end, asked.text[a.start : a.end], a.margin)
                        for a in found
                    )  # fmt: skip
    return reads
