"""Fine-tunes the multilingual encoder's upper layers and a pair head on labelled (question,
reply) pairs, and writes the file the product reads (`adapters/judgement/tuned_use.py`).

- Pairs: `replies-*.yaml` / `answers-*.yaml` items of the corpus directories. One question
  in five, with all its replies, is kept out (the cross-encoder's split, ADR 0087): the
  epoch and the yes threshold are chosen there, the threshold as the lowest at which no
  kept-out reply that is not a yes reads as one. The blind sets' dev halves only check.
- Base: the packaged encoder's own weights (checked against their pins); the word-piece
  table is never trained, so the file carries only what moved in the layers above it.
- One run per seed; the file holds each run's member at the epoch where their mean kept-out
  reading is best (`ensemble.py`), and its threshold is chosen again on the kept-out reading
  of the file as the product reads it (numpy, int8 deltas), which can differ a little from
  torch's.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import random
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch

from factledger.adapters.embedding.use_multilingual import package_layers
from factledger.adapters.judgement.tuned_answers_file import (
    CLASSES,
    DAN_LAYERS,
    TOKEN_LAYERS,
    TunedAnswers,
    TunedMember,
)
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.bench.judgement.answers import (
    PAIR_FILES,
    LabelledPair,
    kept_out,
    kept_out_scores,
    pairs_in,
)
from factledger.bench.judgement.usem.compound import compound_pairs
from factledger.bench.judgement.usem.cross import CrossPairHead, cross_logits
from factledger.bench.judgement.usem.ensemble import Epoch, choose
from factledger.bench.judgement.usem.model import PairHead, Tune, TunedUse, padded
from factledger.bench.judgement.usem.rows import WordPieceRows


@dataclass(frozen=True, slots=True)
class TuneRecipe:
    tune: Tune = "all"
    epochs: int = 6
    batch: int = 32
    learning_rate: float = 5e-5
    head_learning_rate: float = 2e-3
    weight_decay: float = 0.01
    dropout: float = 0.1
    ema: float = 0.98  # scored and kept: weights averaged over steps with this decay (0: last)
    compound: float = 0.5  # share of echoing yes replies also trained under a two-part question
    seed: int = 13
    minutes: float = 30.0  # stops at an epoch's end once this much time is spent
    cross: bool = False  # each side's tokens attend to the other's (`cross.py`, ADR 0117)
    label_smoothing: float = 0.0  # keeps the reader from growing sure of every training pair
    points: int = 1  # readings of the kept-out pairs per epoch, each a point the choice may take


class Vectors:
    """The question's and the reply's vectors of a batch of pairs under the model."""

    def __init__(self, model: TunedUse, rows: WordPieceRows, texts: Sequence[str]) -> None:
        self.model, self.rows = model, rows
        self.sums: dict[str, torch.Tensor] = {}
        if model.tune == "dan":  # the layers below the token sum are frozen: sum once
            with torch.no_grad():
                for start in range(0, len(texts), 64):
                    chunk = list(texts[start : start + 64])
                    x, mask, _ = padded(rows.many(chunk))
                    for text, s in zip(chunk, model.token_sums(x, mask), strict=True):
                        self.sums[text] = s

    def __call__(self, texts: Sequence[str]) -> torch.Tensor:
        lengths = torch.tensor([len(self.rows(t)) for t in texts])
        if self.sums:
            sums = torch.stack([self.sums[t] for t in texts])
        else:
            x, mask, lengths = padded(self.rows.many(texts))
            sums = self.model.token_sums(x, mask)
        return self.model.from_sums(sums, lengths)


def logits(vectors: Vectors, head: PairHead, pairs: Sequence[LabelledPair]) -> torch.Tensor:
    questions = sorted({p.question for p in pairs})
    at = {q: i for i, q in enumerate(questions)}
    v = vectors([*(p.reply for p in pairs), *questions])
    u = v[len(pairs) :][torch.tensor([at[p.question] for p in pairs])]
    out: torch.Tensor = head(u, v[: len(pairs)])
    return out


def any_logits(
    vectors: Vectors, head: PairHead | CrossPairHead, pairs: Sequence[LabelledPair]
) -> torch.Tensor:
    if isinstance(head, CrossPairHead):
        return cross_logits(vectors.model, vectors.rows, head, pairs)
    return logits(vectors, head, pairs)


def predict(
    vectors: Vectors, head: PairHead | CrossPairHead, pairs: Sequence[LabelledPair]
) -> np.ndarray:
    vectors.model.eval()
    head.eval()
    with torch.no_grad():
        parts = [
            any_logits(vectors, head, pairs[s : s + 128]).softmax(-1).numpy()
            for s in range(0, len(pairs), 128)
        ]
    return np.concatenate(parts)


def fit(
    pairs: Sequence[LabelledPair], held: Sequence[LabelledPair], recipe: TuneRecipe, log: Path
) -> list[Epoch]:
    """Trains on `pairs`; after each of `recipe.points` parts of every epoch, the (averaged)
    member and its reading of `held`."""
    random.seed(recipe.seed)
    torch.manual_seed(recipe.seed)
    rows = WordPieceRows()
    base = package_layers()
    model = TunedUse(base, recipe.tune)
    head = CrossPairHead(recipe.dropout) if recipe.cross else PairHead(recipe.dropout)
    texts = sorted({t for p in [*pairs, *held] for t in (p.question, p.reply)})
    vectors = Vectors(model, rows, [] if recipe.cross else texts)
    body = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(
        [
            {"params": body, "lr": recipe.learning_rate},
            {"params": list(head.parameters()), "lr": recipe.head_learning_rate},
        ],
        weight_decay=recipe.weight_decay,
    )
    index = {c: i for i, c in enumerate(CLASSES)}
    averaged = Averaged([*body, *head.parameters()], recipe.ema)
    started = time.monotonic()
    epochs: list[Epoch] = []
    batches = range(0, len(pairs), recipe.batch)
    # The last batch of each of `points` equal parts of an epoch ends a point.
    ends = {batches[len(batches) * k // recipe.points - 1] for k in range(1, recipe.points + 1)}
    for epoch in range(1, recipe.epochs + 1):
        model.train()
        head.train()
        order = list(range(len(pairs)))
        random.shuffle(order)
        total, seen = 0.0, 0
        for start in batches:
            chosen = [pairs[i] for i in order[start : start + recipe.batch]]
            y = torch.tensor([index[p.label] for p in chosen])
            loss = torch.nn.functional.cross_entropy(
                any_logits(vectors, head, chosen), y, label_smoothing=recipe.label_smoothing
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            averaged.update()
            total += float(loss.detach()) * len(chosen)
            seen += len(chosen)
            if start not in ends:
                continue
            with averaged.swapped_in():
                p = predict(vectors, head, held)
                member = snapshot(model, head, base)
            model.train()
            head.train()
            row = {
                "seed": recipe.seed,
                "epoch": epoch,
                "pairs_seen": seen,
                "loss": round(total / seen, 4),
                "minutes": round((time.monotonic() - started) / 60, 1),
                "kept_out": kept_out_scores(p, held),
            }
            epochs.append(Epoch(member, p, row))
            log.write_text(json.dumps([e.row for e in epochs], indent=2), encoding="utf-8")
        if time.monotonic() - started > recipe.minutes * 60:
            break
    return epochs


class Averaged:
    """An exponential moving average of parameters over the steps (decay 0: none), which a
    threshold set by the surest kept-out non-yes reads more steadily than the last step."""

    def __init__(self, parameters: Sequence[torch.nn.Parameter], decay: float) -> None:
        self.parameters, self.decay = list(parameters), decay
        self.shadow = [p.detach().clone() for p in self.parameters]

    def update(self) -> None:
        with torch.no_grad():
            for s, p in zip(self.shadow, self.parameters, strict=True):
                s.mul_(self.decay).add_(p.detach(), alpha=1.0 - self.decay)

    @contextmanager
    def swapped_in(self) -> Iterator[None]:
        live = [p.detach().clone() for p in self.parameters]
        with torch.no_grad():
            for s, p in zip(self.shadow, self.parameters, strict=True):
                p.copy_(s)
        try:
            yield
        finally:
            with torch.no_grad():
                for v, p in zip(live, self.parameters, strict=True):
                    p.copy_(v)


def snapshot(
    model: TunedUse, head: PairHead | CrossPairHead, base: dict[str, np.ndarray]
) -> TunedMember:
    trained = DAN_LAYERS if model.tune == "dan" else (*TOKEN_LAYERS, *DAN_LAYERS)
    return TunedMember(
        {n: model.layers[n].detach().numpy() - base[n] for n in trained},
        head.linear.weight.detach().numpy().T.copy(),
        head.linear.bias.detach().numpy().copy(),
        head.arrays() if isinstance(head, CrossPairHead) else {},
    )


def train_tuned_use(
    directories: Sequence[Path],
    out: Path,
    recipe: TuneRecipe,
    seeds: Sequence[int],
    files: Sequence[str] = PAIR_FILES,
    jobs: int = 1,
    also_at: Sequence[int] = (),
) -> dict[str, object]:
    """One run per seed; the file holds every run's member at the epoch where their mean
    reading of the kept-out pairs accepts the most yeses with none of the others read as one.
    `files`: which labelled files of the directories train and keep out; `jobs`: how many
    runs train at once, each in its own process (a run is seeded and single-threaded, so the
    file is the same either way); `also_at`: epoch counts at which the same runs are also
    cut and written beside `out` (`shorter_file`), so one training gives a shorter recipe's
    file too."""
    every = pairs_in(directories, files)
    train = [p for p in every if not kept_out(p)]
    held = [p for p in every if kept_out(p)]
    if not train or not held:
        raise ValueError("too few labelled (question, reply) pairs to keep one in five out")
    # Each run makes its own two-part questions (another draw of pairs and partners).
    extras = [compound_pairs(train, share=recipe.compound, seed=seed) for seed in seeds]
    made = [len(extra) for extra in extras]
    calls = [
        ([*train, *extra], held, replace(recipe, seed=seed), run_log(out, seed))
        for seed, extra in zip(seeds, extras, strict=True)
    ]
    runs = in_processes(calls, jobs)
    data, chosen = finish(runs, held, out)
    # The same runs cut at fewer epochs: what a run of that many epochs would have written
    # (the epochs before the cut do not depend on how many follow).
    shorter = {}
    for cut in sorted({n for n in also_at if n * recipe.points < min(len(run) for run in runs)}):
        cut_runs = [run[: cut * recipe.points] for run in runs]
        short_data, short = finish(cut_runs, held, shorter_file(out, cut))
        shorter[cut] = {**short, "sha256": hashlib.sha256(short_data).hexdigest()}
    return {
        "files": list(files),
        "pairs": len(train),
        "compound_pairs_made": made,
        "kept_out": len(held),
        "recipe": asdict(recipe),
        "seeds": list(seeds),
        "jobs": jobs,
        "runs": [[e.row for e in run] for run in runs],
        **chosen,
        "out": str(out),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "shorter": shorter,
    }


def shorter_file(out: Path, epochs: int) -> Path:
    return out.with_suffix(f".epochs{epochs}{out.suffix}")


FitCall = tuple[list[LabelledPair], Sequence[LabelledPair], TuneRecipe, Path]


def in_processes(calls: Sequence[FitCall], jobs: int) -> list[list[Epoch]]:
    """Each call's `fit`, `jobs` at a time in spawned processes (in this one when 1)."""
    if jobs <= 1:
        return [fit(*call) for call in calls]
    spawn = multiprocessing.get_context("spawn")
    # A process sums in the order its thread count gives: the parent's, so N jobs write the
    # file one job would.
    threads = torch.get_num_threads()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=spawn) as pool:
        return list(pool.map(_fit, calls, [threads] * len(calls)))


def _fit(call: FitCall, threads: int) -> list[Epoch]:
    torch.set_num_threads(threads)
    return fit(*call)


def run_log(out: Path, seed: int) -> Path:
    return out.with_suffix(f".seed{seed}.json")


def finish(
    runs: Sequence[Sequence[Epoch]], held: Sequence[LabelledPair], out: Path
) -> tuple[bytes, dict[str, object]]:
    """Chooses the runs' common epoch, writes the file, and sets its threshold again on the
    kept-out reading of the file as the product reads it."""
    tuned, chosen = choose(runs, held)
    # Read back from its bytes: the int8 deltas, as the product reads them.
    stored = TunedAnswers.from_bytes(tuned.to_bytes(), out.name)
    as_read = TunedUseAnswerJudge(stored).probabilities_sync([(p.question, p.reply) for p in held])
    read = kept_out_scores(as_read, held)
    tuned = replace(stored, yes_min=float(read["yes_min"]))  # type: ignore[arg-type]
    data = tuned.to_bytes()
    out.write_bytes(data)
    return data, {"chosen": chosen, "kept_out_as_read": read, "yes_min": tuned.yes_min}
