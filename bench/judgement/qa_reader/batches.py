"""Pairs to padded tensors, in batches of similar length (little padding on a CPU)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch

from factledger.bench.judgement.qa_reader.pairs import QaPair
from factledger.bench.judgement.qa_reader.questions import question_for
from factledger.bench.judgement.qa_reader.tokens import Encoded, PairTokens

T = TypeVar("T")
MEANING_ONE_IN = 3  # pairs whose question also carries the field's one-line meaning


@dataclass(frozen=True, slots=True)
class Example:
    encoded: Encoded
    flags: tuple[bool, ...]
    positive: bool


def training_examples(pairs: Sequence[QaPair], tokens: PairTokens, seed: int) -> list[Example]:
    chance = random.Random(seed)
    examples: list[Example] = []
    for pair in pairs:
        meaning = pair.meaning if chance.randrange(MEANING_ONE_IN) == 0 else None
        question = question_for(pair.field, meaning)
        windows = tokens.encode(question, pair.asked.text, pair.asked.agent_before, pair.spans)
        examples.extend(Example(w, pair.flags, bool(w.starts)) for w in windows)
    return examples


def batches(
    examples: Sequence[T], size: int, seed: int, length: Callable[[T], int]
) -> Iterator[list[T]]:
    """Shuffled, then sorted by length within runs of fifty batches, then shuffled again."""
    chance = random.Random(seed)
    order = list(examples)
    chance.shuffle(order)
    run = size * 50
    out: list[list[T]] = []
    for begin in range(0, len(order), run):
        chunk = sorted(order[begin : begin + run], key=length)
        out.extend(chunk[i : i + size] for i in range(0, len(chunk), size))
    chance.shuffle(out)
    yield from out


def tensors(batch: Sequence[Example]) -> dict[str, torch.Tensor]:
    width = max(len(e.encoded.ids) for e in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    types = torch.zeros_like(ids)
    attention = torch.zeros_like(ids)
    answerable = torch.zeros_like(ids, dtype=torch.bool)  # [CLS] and the line's tokens
    gold_start = torch.zeros_like(ids, dtype=torch.bool)
    gold_end = torch.zeros_like(ids, dtype=torch.bool)
    for row, example in enumerate(batch):
        e = example.encoded
        n = len(e.ids)
        ids[row, :n] = torch.tensor(e.ids)
        types[row, :n] = torch.tensor(e.types)
        attention[row, :n] = 1
        answerable[row, 0] = True
        answerable[row, e.first_line_token : e.first_line_token + len(e.offsets)] = True
        for s in e.starts or (0,):
            gold_start[row, s] = True
        for s in e.ends or (0,):
            gold_end[row, s] = True
    flags = torch.tensor([[float(f) for f in e.flags] for e in batch])
    positive = torch.tensor([e.positive for e in batch])
    return {
        "ids": ids,
        "types": types,
        "attention": attention,
        "answerable": answerable,
        "gold_start": gold_start,
        "gold_end": gold_end,
        "flags": flags,
        "positive": positive,
    }
