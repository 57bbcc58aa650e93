"""Fits the reader of removals the agent confirms (`adapters/judgement/confirmations.py`, ADR
0209): the packaged multilingual encoder tuned as the multilingual forget reader is (`usem`,
one seed), on (subject's line, agent's next line) pairs: a writer's labelled pairs
(`confirmations/confirm-pairs*.yaml`: the customer asks to remove something held about them
and the agent confirms it, a yes; requests the agent does not confirm, confirmed removals of
other things and ordinary pairs, neither), and, as neither, every (subject line, next agent
line) pair of the training writers' conversations (`conversations/`) in a session with no
request to forget. One subject line in five (by a CRC of its text) is kept out; the epoch and
the threshold are chosen by that trainer's rule on the kept-out pairs (the lowest threshold at
which none of them that is not a confirmation reads as one). Needs torch (lab only). Training
data only: the reader is judged by the blind conversation halves, which no pair here comes
from."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

import yaml

from factledger.application.judgement.types import Reply
from factledger.bench.judgement.answers import LabelledPair

DATA = Path(__file__).parent / "data"
PACKAGED_CONFIRM_PAIRS = DATA / "confirmations"
PACKAGED_CONVERSATIONS = DATA / "conversations"
YES, NEITHER = Reply.YES.value, Reply.NEITHER.value
KEPT_OUT = 5


def kept_out(line: str) -> bool:
    return zlib.crc32(line.encode("utf-8")) % KEPT_OUT == 0


def writer_pairs(directory: Path) -> list[LabelledPair]:
    """The writer's labelled (customer line, agent line) pairs under `directory`."""
    pairs = []
    for path in sorted(directory.glob("confirm-pairs*.yaml")):
        for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            label = YES if item["agent_confirms_removal"] else NEITHER
            pairs.append(LabelledPair(str(item["customer"]), str(item["agent"]), label))
    return pairs


def conversation_pairs(directories: Sequence[Path]) -> list[LabelledPair]:
    """Each subject line and the agent's next line, in the conversations' sessions with no
    request to forget, once each, as neither."""
    said: dict[tuple[str, str], None] = {}
    for directory in directories:
        for path in sorted(directory.rglob("cases-*.yaml")):
            for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                for session in case["sessions"]:
                    if (session.get("expect") or {}).get("forget_requests"):
                        continue
                    lines = session["lines"]
                    for line, after in pairwise(lines):
                        if line["role"] == "subject" and after["role"] != "subject":
                            said[(str(line["text"]), str(after["text"]))] = None
    return [LabelledPair(subject, agent, NEITHER) for subject, agent in said]


def fit_confirmation_reader(
    directory: Path, conversations: Sequence[Path], out: Path, epochs: int = 3
) -> dict[str, object]:
    """Tunes the reader (module docstring) and writes it to `out`; returns what was chosen and
    the file's SHA-256 to pin."""
    from factledger.bench.judgement.usem.train import TuneRecipe, finish, fit, run_log

    written = writer_pairs(directory)
    pairs = [*written, *conversation_pairs(conversations)]
    fitted = [p for p in pairs if not kept_out(p.question)]
    held = [p for p in pairs if kept_out(p.question)]
    recipe = TuneRecipe(epochs=epochs, compound=0.0, minutes=60.0)
    runs = [fit(fitted, held, recipe, run_log(out, recipe.seed))]
    data, chosen = finish(runs, held, out)
    return {
        "pairs": len(pairs),
        "writer_pairs": len(written),
        "confirmations": sum(p.label == YES for p in written),
        "kept_out": len(held),
        "kept_out_confirmations": sum(p.label == YES for p in held),
        "chosen": chosen,
        "out": str(out),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
