"""Fits the removal acknowledgement head (`adapters/judgement/acknowledgements.py`, ADR 0206)
over the packaged multilingual encoder: a writer's labelled agent lines
(`acknowledgements/agent-acks*.yaml`: lines that tell the customer something they said was
removed, and near misses), and, as lines that do not, every agent line of the training
writers' conversations (`conversations/`, `cases-*.yaml`) in a session with no request to
forget. The head's bias is then moved so that its own bar (0.5, `ACK_MIN`) is the lowest at
which, out of fold, at most `CONVERSATION_RATE` of those conversation lines and at most
`NEAR_MISS_RATE` of the writer's near misses read as an acknowledgement. Prints the
out-of-fold figures at the bar and the file's SHA-256 to pin. Training data only: the head is
judged by the blind conversation halves, which no line here comes from."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import yaml

from factledger.adapters.judgement.acknowledgements import ACK_QUESTION, HEAD
from factledger.application.judgement.types import Reply
from factledger.adapters.judgement.heads import Heads
from factledger.application.memory.ports import Embedder
from factledger.bench.judgement.answers import LabelledPair
from factledger.bench.judgement.fit import fit_head
from factledger.bench.judgement.instructions import _x, out_of_fold_margins
from factledger.bench.judgement.train import BOOL, BUCKETS, YES_MIN

DATA = Path(__file__).parent / "data"
PACKAGED_ACK_LINES = DATA / "acknowledgements"
PACKAGED_CONVERSATIONS = DATA / "conversations"
YES, NEITHER = Reply.YES.value, Reply.NEITHER.value
CONVERSATION_RATE = 0.01
NEAR_MISS_RATE = 0.05


def writer_lines(directory: Path) -> tuple[list[str], list[bool]]:
    """(texts, whether each acknowledges a removal) of the writer's files under `directory`."""
    texts, acks = [], []
    for path in sorted(directory.glob("agent-acks*.yaml")):
        for line in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            texts.append(str(line["text"]))
            acks.append(bool(line["acknowledges_removal"]))
    return texts, acks


def agent_lines(directories: Sequence[Path]) -> list[str]:
    """The agent lines of the conversations under `directories` in sessions with no request to
    forget, once each."""
    said: dict[str, None] = {}
    for directory in directories:
        for path in sorted(directory.rglob("cases-*.yaml")):
            for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                for session in case["sessions"]:
                    if (session.get("expect") or {}).get("forget_requests"):
                        continue
                    lines = session["lines"]
                    said.update(dict.fromkeys(str(x["text"]) for x in lines if x["role"] != "subject"))
    return list(said)


def shift_for(margins: np.ndarray, rate: float) -> float:
    """How far to move the "true" bias down (up, when negative) so that at most `rate` of
    these out-of-fold margins stay at or above 0 (the head's 0.5)."""
    allowed = int(np.floor(rate * len(margins)))
    if allowed >= len(margins):
        return float("-inf")
    ordered = np.sort(margins)[::-1]
    return float(ordered[allowed]) + 1e-4


def figures(margins: np.ndarray, labels: np.ndarray, shift: float) -> dict[str, float]:
    said = margins - shift >= 0.0
    tp = float((said & labels).sum())
    return {
        "precision": tp / max(float(said.sum()), 1.0),
        "recall": tp / max(float(labels.sum()), 1.0),
        "lines": float(len(labels)),
        "acknowledgements": float(labels.sum()),
    }


async def train_acknowledgement_head(
    embedder: Embedder, directory: Path, conversations: Sequence[Path], out: Path
) -> dict[str, object]:
    """Fits the head on the writer's lines and the conversations' agent lines, its bias moved
    to the bar (module docstring); returns the out-of-fold figures and the file's SHA-256."""
    texts, acks = writer_lines(directory)
    said = agent_lines(conversations)
    labels = ["true" if a else "false" for a in acks] + ["false"] * len(said)
    x = await _x(embedder, [*texts, *said])
    margins = out_of_fold_margins(x, labels)
    writer, conversation = margins[: len(texts)], margins[len(texts) :]
    near_misses = writer[~np.array(acks)]
    shift = max(
        shift_for(conversation, CONVERSATION_RATE), shift_for(near_misses, NEAR_MISS_RATE)
    )
    head = fit_head(x, labels, BOOL)
    head.bias[head.column("true")] -= shift
    heads = Heads({HEAD: head}, embedder.model_id, BUCKETS, YES_MIN)
    truth = np.array(labels) == "true"
    return {
        "writer_lines": figures(writer, truth[: len(texts)], shift),
        "conversation_lines_read_as_acknowledgements": int((conversation - shift >= 0).sum()),
        "conversation_lines": len(said),
        "near_misses_read_as_acknowledgements": int((near_misses - shift >= 0).sum()),
        "shift": shift,
        "out": str(out),
        "sha256": heads.save(out),
    }


KEPT_OUT = 5  # one line in five (by a CRC of its text) is kept out of the tuned reader's fit


def kept_out(text: str) -> bool:
    return zlib.crc32(text.encode("utf-8")) % KEPT_OUT == 0


def fit_tuned_reader(
    directory: Path, conversations: Sequence[Path], out: Path, epochs: int = 3
) -> dict[str, object]:
    """The packaged multilingual encoder tuned as the forget reader's is (`usem`, one seed),
    on (`ACK_QUESTION`, line) pairs: the writer's acknowledgements `yes`, its near misses and
    the conversations' agent lines `neither`; its epoch and its threshold chosen by that
    trainer's rule on the kept-out lines (the lowest at which none of them that is not an
    acknowledgement reads as one). Needs torch (lab only)."""
    from factledger.bench.judgement.usem.train import TuneRecipe, finish, fit, run_log

    texts, acks = writer_lines(directory)
    said = agent_lines(conversations)
    pairs = [
        LabelledPair(ACK_QUESTION, t, YES if a else NEITHER)
        for t, a in [*zip(texts, acks, strict=True), *((s, False) for s in said)]
    ]
    fitted = [p for p in pairs if not kept_out(p.reply)]
    held = [p for p in pairs if kept_out(p.reply)]
    recipe = TuneRecipe(epochs=epochs, compound=0.0, minutes=60.0)
    runs = [fit(fitted, held, recipe, run_log(out, recipe.seed))]
    data, chosen = finish(runs, held, out)
    return {
        "lines": len(pairs),
        "acknowledgements": int(sum(acks)),
        "kept_out": len(held),
        "kept_out_acknowledgements": sum(p.label == YES for p in held),
        "chosen": chosen,
        "out": str(out),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
