"""Vetoes on the answer judge's yes, and the yes threshold they leave (ADR 0124, lab only).

A yes of the packaged judge needs the tuned reader's yes (ADR 0105) and the reply-only
head's (ADR 0080). The candidate here adds vetoes, each a learned reading that turns a yes
into neither, and reads the tuned reader's yes at a threshold chosen on the kept-out
questions with the vetoes applied (the lowest at which no kept-out non-yes is a yes):

- **tentative**: the hedge head reads the reply as tentative ("yes if the price stays the
  same");
- **asks back**: the statement head reads the reply as a question;
- **one part of a two-part question**: a question the product's clause cutter splits into
  two or more clauses of three words or more is read part by part, and each part must be a
  likeliest yes of the tuned reader too, so a yes to one half of it is not a yes.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from factledger.adapters.judgement.cross_answers import decide
from factledger.adapters.judgement.features import Matrix, features
from factledger.adapters.judgement.fields import clauses_of
from factledger.adapters.judgement.judge import FLAG_MIN, LearnedJudge
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.application.judgement.types import Reply
from factledger.bench.judgement.answers import YES_FLOOR

Mask = npt.NDArray[np.bool_]
_WORD = re.compile(r"\w+")
PART_WORDS = 3  # a clause of fewer words ("correct?", "right?") is no part of its own


def question_parts(question: str) -> list[str]:
    """The parts of a question that asks several things (none for a one-part question)."""
    parts = [c for c in clauses_of(question) if len(_WORD.findall(c)) >= PART_WORDS]
    return parts if len(parts) >= 2 else []


@dataclass(frozen=True, slots=True)
class Signals:
    """What each reader makes of each pair, row by row."""

    tuned: Matrix  # yes, no, neither: the tuned reader's mean
    reply_head: Matrix  # yes, no, neither: the reply-only head
    asks_back: Matrix  # the statement head's "question"
    tentative: Matrix  # the hedge head's "true"
    parts_yes: Matrix  # the lowest yes of the question's parts (1 for a one-part question)
    parts_likeliest: Mask  # whether every part reads likeliest as a yes


@dataclass(frozen=True, slots=True)
class Vetoes:
    """Which vetoes apply, and the reply-only head's bar."""

    reply_head_min: float | None = 0.6  # None: the reply-only head is not asked
    tentative: bool = True
    asks_back: bool = True
    parts: bool = True

    def allowed(self, s: Signals) -> Mask:
        """Rows whose yes no veto refuses (the tuned reader's own bar left aside)."""
        ok: Mask = s.tuned[:, 0] >= s.tuned[:, 1:].max(axis=1)
        if self.reply_head_min is not None:
            rh = s.reply_head
            ok &= (rh[:, 0] >= self.reply_head_min) & (rh[:, 0] >= rh[:, 1:].max(axis=1))
        if self.tentative:
            ok &= s.tentative < FLAG_MIN
        if self.asks_back:
            ok &= s.asks_back < FLAG_MIN
        if self.parts:
            ok &= s.parts_likeliest
        return ok


def bar(s: Signals, labels: Sequence[str], vetoes: Vetoes) -> float:
    """The lowest yes threshold (three decimals, never under the floor) at which no pair of
    `labels` that is not a yes and that the vetoes let through reads as a yes."""
    others = s.tuned[vetoes.allowed(s) & (np.array(labels) != "yes"), 0]
    highest = float(others.max()) if len(others) else 0.0
    return max(YES_FLOOR, math.floor(highest * 1000 + 1) / 1000)


def said_yes(s: Signals, vetoes: Vetoes, yes_min: float) -> Mask:
    out: Mask = vetoes.allowed(s) & (s.tuned[:, 0] >= yes_min)
    return out


async def packaged_readings(
    judge: LearnedJudge, tuned: TunedUseAnswerJudge, pairs: Sequence[tuple[str, str]]
) -> tuple[Matrix, Matrix, Matrix]:
    """The tuned reader's and the reply-only head's probabilities (yes, no, neither), and the
    heads' features of the replies."""
    p = await asyncio.to_thread(tuned.probabilities_sync, pairs)
    replies = [r for _, r in pairs]
    heads = judge.heads
    x = features(await judge.embedder.embed(replies), replies, heads.buckets)
    answer = heads["answer"]
    rh = answer.probabilities(x)[:, [answer.column(c) for c in ("yes", "no", "neither")]]
    return p, rh, x


async def signals(
    judge: LearnedJudge, tuned: TunedUseAnswerJudge, pairs: Sequence[tuple[str, str]]
) -> Signals:
    """Every reader's reading of `pairs`."""
    p, rh, x = await packaged_readings(judge, tuned, pairs)
    heads = judge.heads
    statement, hedged = heads["statement"], heads["hedged"]
    asks = statement.probabilities(x)[:, statement.column("question")]
    tentative = hedged.probabilities(x)[:, hedged.column("true")]
    split = [(i, part, r) for i, (q, r) in enumerate(pairs) for part in question_parts(q)]
    parts_yes = np.ones(len(pairs), dtype=np.float32)
    likeliest = np.ones(len(pairs), dtype=bool)
    if split:
        pp = await asyncio.to_thread(tuned.probabilities_sync, [(q, r) for _, q, r in split])
        for (i, _, _), row in zip(split, pp, strict=True):
            parts_yes[i] = min(parts_yes[i], row[0])
            likeliest[i] &= bool(row[0] >= row[1:].max())
    return Signals(p, rh, asks, tentative, parts_yes, likeliest)


@dataclass(frozen=True, slots=True)
class VetoedAnswers:
    """The candidate judge: the packaged readers, the vetoes, and the tuned reader's bar
    chosen with them on the kept-out questions."""

    judge: LearnedJudge
    tuned: TunedUseAnswerJudge
    yes_min: float
    vetoes: Vetoes = Vetoes()

    async def answers(self, pairs: Sequence[tuple[str, str]]) -> list[Reply]:
        if not pairs:
            return []
        s = await signals(self.judge, self.tuned, pairs)
        # Without a yes, the tuned reader's own reading (a no declines, else neither).
        read = decide(s.tuned, 1.01)
        yes = said_yes(s, self.vetoes, self.yes_min)
        return [Reply.YES if y else r for y, r in zip(yes, read, strict=True)]
