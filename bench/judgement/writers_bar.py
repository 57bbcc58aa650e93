"""`python -m factledger.bench.judgement.writers_bar FILE [FILE ...] [--writers ei]
[--out-dir DIR]`: tuned answer files read on whole writers they never trained on, each with
its yes bar fitted there (ADR 0148, lab only).

Each FILE (a tuned multilingual encoder file, `tune-use`'s output or the shipped one) reads
every pair of the named writers' `replies-<writer>-*.yaml` as the product reads a tuned file:
a yes needs the file's reader's yes (the likeliest class, at or above a bar) and the English
reply-only head's yes at its shipped bar. The bar fitted there is the lowest (three decimals,
never under 0.5) at which no reply that is not a yes reads as a yes of both. Prints, per file
as JSON: the fitted bar and, at it and at the file's own bar, the yeses accepted and the false
yeses, pooled, per writer and per language group; the file's reader without the reply-only head
at a bar fitted there too; with `--surest N`, the N non-yeses the head lets through that the
reader reads as the surest yeses (what sets the bar). With `--out-dir`, writes a copy of each file
holding the fitted bar (nothing else in it changes) and prints the copy's SHA-256; the scorer
reads it with `lines --tuned-answers COPY --reply-head-agrees`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factledger.adapters.judgement.features import Matrix
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.bench.judgement.answers import LabelledPair, pairs_in, yes_threshold
from factledger.bench.judgement.corpus import PACKAGED_CORPUS
from factledger.bench.judgement.ngram_candidate import Mask, reads_yes
from factledger.bench.judgement.vetoes import packaged_readings

UNSEEN_WRITERS = "ei"  # neither the shipped tuned reader (c, d) nor ADR 0148's (c, d, r, s)


@dataclass(frozen=True, slots=True)
class Read:
    """A file's reading of the pairs: its probabilities and where the reply-only head agrees."""

    tuned: Matrix
    head_yes: Mask


def composed_bar(read: Read, labels: Sequence[str]) -> float:
    """The lowest bar at which no non-yes that the reply-only head lets through reads as a
    yes of the file's reader."""
    keep = read.head_yes
    return yes_threshold(read.tuned[keep], [x for x, k in zip(labels, keep, strict=True) if k])


def scores(read: Read, pairs: Sequence[LabelledPair], bar: float) -> dict[str, float]:
    """Yeses accepted and false yeses of the composition at `bar`."""
    said = reads_yes(read.tuned, bar) & read.head_yes
    y = np.array([p.label == "yes" for p in pairs])
    return {
        "pairs": float(len(pairs)),
        "yeses": float(y.sum()),
        "yes_accepted": round(float((said & y).sum()) / max(int(y.sum()), 1), 3),
        "false_yes": float((said & ~y).sum()),
    }


def grouped(
    read: Read, pairs: Sequence[LabelledPair], writer_of: Sequence[str], bar: float
) -> dict[str, dict[str, float]]:
    """`scores` pooled, per writer and for English replies and the others."""
    groups = {"pooled": [True] * len(pairs)}
    groups |= {f"writer_{w}": [x == w for x in writer_of] for w in sorted(set(writer_of))}
    groups["en"] = [p.language == "en" for p in pairs]
    groups["not_en"] = [p.language not in (None, "en") for p in pairs]
    out = {}
    for name, keep in groups.items():
        rows = np.array(keep)
        part = Read(read.tuned[rows], read.head_yes[rows])
        out[name] = scores(part, [p for p, k in zip(pairs, keep, strict=True) if k], bar)
    return out


def surest(
    read: Read, pairs: Sequence[LabelledPair], writer_of: Sequence[str], count: int
) -> list[dict[str, object]]:
    """The `count` non-yeses the reply-only head lets through that the file's reader reads
    as the surest yeses (training writers' replies: these set the bar)."""
    let = [
        i
        for i, p in enumerate(pairs)
        if p.label != "yes" and read.head_yes[i] and read.tuned[i, 0] >= read.tuned[i, 1:].max()
    ]
    let.sort(key=lambda i: -float(read.tuned[i, 0]))
    return [
        {
            "yes": round(float(read.tuned[i, 0]), 3),
            "writer": writer_of[i],
            "label": pairs[i].label,
            "language": pairs[i].language,
            "question": pairs[i].question,
            "reply": pairs[i].reply,
        }
        for i in let[:count]
    ]


def with_bar(data: bytes, bar: float) -> bytes:
    """The file's bytes with its yes bar replaced; its members are copied as stored (read
    back and quantised again they could move by a rounding)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["yes_min"] = np.array(bar)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


async def read_file(judge: LearnedJudge, path: Path, pairs: Sequence[LabelledPair]) -> Read:
    tuned = TunedUseAnswerJudge.load(path, None)
    p, rh, _ = await packaged_readings(judge, tuned, [(x.question, x.reply) for x in pairs])
    return Read(p, reads_yes(rh, judge.heads.yes_min))


def unseen_pairs(corpora: Sequence[Path], writers: str) -> tuple[list[LabelledPair], list[str]]:
    pairs: list[LabelledPair] = []
    writer_of: list[str] = []
    for w in writers:
        mine = pairs_in(corpora, (f"replies-{w}-*.yaml",))
        pairs += mine
        writer_of += [w] * len(mine)
    return pairs, writer_of


def report(
    files: Sequence[Path],
    corpora: Sequence[Path],
    writers: str,
    out_dir: Path | None,
    surest_count: int = 0,
) -> dict[str, object]:
    pairs, writer_of = unseen_pairs(corpora, writers)
    if not pairs:
        raise ValueError(f"no replies of writers {writers!r} in the corpora")
    labels = [p.label for p in pairs]
    judge = LearnedJudge.packaged()
    out: dict[str, object] = {"writers": writers, "pairs": len(pairs)}
    for path in files:
        data = path.read_bytes()
        read = asyncio.run(read_file(judge, path, pairs))
        bar = composed_bar(read, labels)
        own = TunedUseAnswerJudge.load(path, None).tuned.yes_min
        alone = Read(read.tuned, np.ones(len(pairs), dtype=bool))
        alone_bar = composed_bar(alone, labels)
        row: dict[str, object] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "own_bar": own,
            "at_own_bar": grouped(read, pairs, writer_of, own),
            "bar_fitted_here": bar,
            "at_bar_fitted_here": grouped(read, pairs, writer_of, bar),
            # The file's reader without the reply-only head, its bar fitted here too: how
            # much of what the composition misses is the head's refusal.
            "alone_bar_fitted_here": alone_bar,
            "alone_at_its_bar": scores(alone, pairs, alone_bar),
            "surest_non_yeses": surest(read, pairs, writer_of, surest_count),
        }
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            copy = out_dir / f"{path.stem}.writers-{writers}{path.suffix}"
            copied = with_bar(data, bar)
            copy.write_bytes(copied)
            row["copy"] = {"path": str(copy), "sha256": hashlib.sha256(copied).hexdigest()}
        out[path.name] = row
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.writers_bar")
    parser.add_argument("files", type=Path, nargs="+", help="tuned answer files")
    parser.add_argument("--corpus", type=Path, action="append", help="a directory of replies")
    parser.add_argument("--writers", default=UNSEEN_WRITERS, help="the writers' letters")
    parser.add_argument("--out-dir", type=Path, help="write each file again with its bar here")
    parser.add_argument(
        "--surest", type=int, default=0, help="list this many non-yeses read as surest yeses"
    )
    args = parser.parse_args(argv)
    corpora = args.corpus or [PACKAGED_CORPUS]
    done = report(args.files, corpora, args.writers, args.out_dir, args.surest)
    sys.stdout.write(json.dumps(done, indent=2) + "\n")


if __name__ == "__main__":
    main()
