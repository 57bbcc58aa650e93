"""The lab's answer head: it reads a reply's opening, trains offline from a corpus directory
(no torch, no download), and chooses its yes threshold out of fold so that no reply that is
not a yes reads as one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.application.judgement.types import Reply
from factledger.bench.judgement.__main__ import main
from factledger.bench.judgement.answer_head import LearnedAnswerHead, opening_of
from factledger.bench.judgement.answers import (
    figures,
    replies_in,
    train_answer_head,
    yes_threshold,
)
from factledger.bench.judgement.corpus import load_corpus

YES = ("yes, since March", "yep that's right", "correct", "yes it is", "sí, desde enero")
NO = ("no, it's Globex", "not anymore", "nope, wrong one", "no", "nein, das stimmt nicht")
NEITHER = ("let me check", "ask my manager", "what time is it", "maybe", "I'm not sure")


def _corpus(directory: Path) -> Path:
    items = [
        {
            "id": f"t-{i}",
            "domain": "sales",
            "change": {"field": "supplier", "value": "Initech"},
            "question": "You buy from Initech now?",
            "reply": reply,
            "label": label,
        }
        for i, (reply, label) in enumerate(
            [(r, "yes") for r in YES] + [(r, "no") for r in NO] + [(r, "neither") for r in NEITHER]
        )
    ]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "replies-t.yaml").write_text(yaml.safe_dump(items), encoding="utf-8")
    return directory


def test_replies_files_train_the_answer_head_but_not_the_judgement_heads(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    assert len(replies_in([corpus])) == len(YES + NO + NEITHER)
    assert load_corpus(corpus).replies == ()


def test_the_opening_is_the_words_before_the_first_pause() -> None:
    assert opening_of("Yes, since March, and the kids love it.") == "Yes"
    assert opening_of("  no it is not the one we use any more at all") == "no it is not the one"
    assert opening_of("Sí — desde enero") == "Sí"
    assert opening_of("...") == "..."


def test_the_threshold_lies_above_every_reply_that_is_not_a_yes() -> None:
    p = np.array([0.99, 0.7, 0.81, 0.3], dtype=np.float32)
    labels = ["yes", "yes", "no", "neither"]
    threshold = yes_threshold(p, labels)
    assert 0.81 < threshold <= 0.811
    assert figures(p, labels, threshold) == {
        "replies": 4.0,
        "yeses": 2.0,
        "yes_accepted": 0.5,
        "false_yes": 0.0,
    }
    assert yes_threshold(np.array([0.9, 0.1], dtype=np.float32), ["yes", "no"]) == 0.5


async def test_a_head_trained_from_a_corpus_reads_replies_with_no_false_yes(
    tmp_path: Path,
) -> None:
    embedder = HashingEmbedder(64)
    out = tmp_path / "answer-head.npz"
    done = await train_answer_head(embedder, [_corpus(tmp_path / "corpus")], out)
    assert done["out_of_fold"]["false_yes"] == 0.0  # type: ignore[index]
    head = LearnedAnswerHead.load(embedder, out, str(done["sha256"]))
    assert head.heads.yes_min == done["yes_min"]
    said = await head.answers([("You buy from Initech now?", r) for r in NO + NEITHER])
    assert Reply.YES not in said
    assert set(said) <= {Reply.NO, Reply.NEITHER}


def test_the_command_writes_the_head_it_names(tmp_path: Path, capsys: object) -> None:
    out = tmp_path / "candidate.npz"
    main(["answers", "--corpus", str(_corpus(tmp_path / "corpus")), "--out", str(out)])
    assert out.exists()
