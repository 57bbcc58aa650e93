"""Two-part questions made from the training pairs: a yes to one part is not a yes.

The labelled pairs hardly hold a question that asks two things, and every reader tried
(ADR 0087, this trainer's first run) read a yes to one half of one ("...and still based in
Leeds?" / "Still in Leeds, yep.") as a sure yes. This adds such pairs to the training split
only: a yes reply that repeats a word of its own question, under that question set beside
another question of the same language (in either order), labelled neither.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from factledger.bench.judgement.answers import LabelledPair

WORD = re.compile(r"\w{3,}")
COMMON = 0.01  # a word in more than this share of the questions is not an echo of one


def _words(text: str) -> set[str]:
    return {w.casefold() for w in WORD.findall(text)}


def _echoes(pair: LabelledPair, common: set[str]) -> bool:
    """Whether the reply repeats a word of its question that few questions hold (not the
    "correct" of "..., correct?"): a reply that names what it agrees to, so it agrees to
    that part only."""
    return bool((_words(pair.question) & _words(pair.reply)) - common)


def common_words(questions: Sequence[str], share: float = COMMON) -> set[str]:
    """The words found in more than `share` of the questions."""
    counts: Counter[str] = Counter(w for q in set(questions) for w in _words(q))
    return {w for w, n in counts.items() if n > share * len(set(questions))}


def compound_pairs(pairs: Sequence[LabelledPair], *, share: float, seed: int) -> list[LabelledPair]:
    """About `share` of the yes replies that echo their question, each under a two-part
    question, labelled neither (the other part is of another item, same language)."""
    rng = random.Random(seed)
    common = common_words([p.question for p in pairs])
    by_language: dict[str | None, list[str]] = defaultdict(list)
    for p in pairs:
        by_language[p.language].append(p.question)
    out = []
    for p in pairs:
        if p.label != "yes" or not _echoes(p, common) or rng.random() >= share:
            continue
        others = [q for q in by_language[p.language] if q != p.question]
        if not others:
            continue
        other = rng.choice(others)
        question = f"{p.question} {other}" if rng.random() < 0.5 else f"{other} {p.question}"
        out.append(LabelledPair(question, p.reply, "neither", p.language))
    return out
