"""Fine-tuning the reader: every layer and the embeddings, AdamW, a warm-up then a linear
decay spread over the run: over its time budget or its steps, whichever runs out first (so a
bounded run still ends with a small rate).

The span loss is the marginal likelihood of the gold starts (and ends) among `[CLS]` and the
line's tokens; a pair without an answer has `[CLS]` as its only gold. The flags (update,
correction, hedged, inferred) are learnt on answered pairs only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import torch
from torch.nn import functional

from factledger.bench.judgement.qa_reader.batches import Example, batches, tensors
from factledger.bench.judgement.qa_reader.model import HEADS, QaReader

FLAG_WEIGHT = 0.5
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Budget:
    seconds: float
    epochs: int
    batch: int = 32
    learning_rate: float = 1e-4
    warm_up: float = 0.06  # share of the run (of its time or its steps, whichever runs out first)
    seed: int = 28
    bf16: bool = False  # autocast matrix products to bfloat16 (weights and updates stay float32)
    epoch_checkpoints: bool = False  # also keep `reader-epochN.pt` after each finished epoch
    head_rate: float = 1.0  # the fresh heads' rate, as a multiple of `learning_rate`


def span_loss(scores: torch.Tensor, gold: torch.Tensor, answerable: torch.Tensor) -> torch.Tensor:
    masked = scores.masked_fill(~answerable, -1e4)
    log_p = functional.log_softmax(masked, dim=-1)
    return -(torch.logsumexp(log_p.masked_fill(~gold, -1e4), dim=-1)).mean()


def pair_loss(reader: QaReader, examples: Sequence[Example]) -> torch.Tensor:
    return loss_of(reader, tensors(examples))


def pair_length(example: Example) -> int:
    return len(example.encoded.ids)


def loss_of(reader: QaReader, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    start, end, flags = reader(batch["ids"], batch["types"], batch["attention"])
    loss = span_loss(start, batch["gold_start"], batch["answerable"])
    loss = loss + span_loss(end, batch["gold_end"], batch["answerable"])
    positive = batch["positive"]
    if bool(positive.any()):
        flag_loss = functional.binary_cross_entropy_with_logits(
            flags[positive], batch["flags"][positive]
        )
        loss = loss + FLAG_WEIGHT * flag_loss
    return loss


def _rate(progress: float, budget: Budget) -> float:
    """`progress` in [0, 1]: the larger of the time and the steps used."""
    if progress < budget.warm_up:
        return budget.learning_rate * max(0.05, progress / budget.warm_up)
    return budget.learning_rate * max(0.02, (1 - progress) / (1 - budget.warm_up))


def _groups(reader: QaReader, head_rate: float) -> list[dict[str, object]]:
    """Decayed and undecayed parameters, the heads (fresh, unlike the encoder) at
    `head_rate` times the run's rate."""
    groups: dict[tuple[bool, bool], list[torch.nn.Parameter]] = {}
    for name, parameter in reader.named_parameters():
        undecayed = name.endswith("bias") or "norm" in name
        groups.setdefault((name.startswith(HEADS), undecayed), []).append(parameter)
    return [
        {"params": params, "weight_decay": 0.0 if undecayed else 0.01,
         "rate": head_rate if head else 1.0}
        for (head, undecayed), params in groups.items()
    ]  # fmt: skip


def fit(
    reader: QaReader,
    examples: Sequence[T],
    budget: Budget,
    out: Path,
    loss: Callable[[QaReader, Sequence[T]], torch.Tensor],
    length: Callable[[T], int],
) -> dict[str, float]:
    """Trains in place until the epochs or the time run out; saves `reader.pt` every ten
    minutes and at the end (and `reader-epochN.pt` after each finished epoch if the budget
    says so). Returns what the run did."""
    optimiser = torch.optim.AdamW(_groups(reader, budget.head_rate), lr=budget.learning_rate)
    began = last_save = time.monotonic()
    seen = steps = 0
    running = 0.0
    total_steps = budget.epochs * -(-len(examples) // budget.batch)
    reader.train()
    for epoch in range(budget.epochs):
        for batch in batches(examples, budget.batch, budget.seed + epoch, length):
            elapsed = time.monotonic() - began
            if elapsed >= budget.seconds:
                break
            progress = max(elapsed / budget.seconds, steps / total_steps)
            for group in optimiser.param_groups:
                group["lr"] = _rate(progress, budget) * group["rate"]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=budget.bf16):
                value = loss(reader, batch)
            optimiser.zero_grad()
            torch.autograd.backward(value)
            torch.nn.utils.clip_grad_norm_(reader.parameters(), 1.0)
            optimiser.step()
            steps += 1
            seen += len(batch)
            now = float(value.detach())
            running = 0.9 * running + 0.1 * now if steps > 1 else now
            if steps % 20 == 0:
                print(  # noqa: T201 - the lab's progress line
                    f"epoch {epoch} step {steps} pairs {seen} loss {running:.3f} "
                    f"{seen / (time.monotonic() - began):.1f} pairs/s",
                    flush=True,
                )
            if time.monotonic() - last_save > 600:
                torch.save(reader.state_dict(), out / "reader.pt")
                last_save = time.monotonic()
        else:
            if budget.epoch_checkpoints:  # each epoch evaluated as it arrives
                torch.save(reader.state_dict(), out / f"reader-epoch{epoch + 1}.pt")
            continue
        break
    torch.save(reader.state_dict(), out / "reader.pt")
    return {
        "seconds": round(time.monotonic() - began, 1),
        "steps": steps,
        "pairs_seen": seen,
        "epochs_of_pairs": round(seen / max(1, len(examples)), 2),
        "final_loss": round(running, 4),
    }
