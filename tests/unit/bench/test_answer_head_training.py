"""The lab's pair answer head: it trains offline from a directory of labelled (question,
reply) pairs with numpy alone (no torch, no download), reports its figures per language
group, and chooses its yes threshold out of fold so that no pair that is not a yes reads as
one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.judgement.pair_answers import PairAnswerJudge
from factledger.application.judgement.types import Reply
from factledger.bench.judgement.__main__ import main
from factledger.bench.judgement.answers import (
    figures,
    pairs_in,
    train_answer_head,
    yes_threshold,
)

QUESTION = "You buy from Initech now?"
YES = ("yes, since March", "yep that's right", "correct", "yes it is", "sí, desde enero")
NO = ("no, it's Globex", "not anymore", "nope, wrong one", "no", "nein, das stimmt nicht")
NEITHER = ("let me check", "ask my manager", "what time is it", "maybe", "I'm not sure")


def _corpus(directory: Path) -> Path:
    labelled = (
        [(r, "yes") for r in YES] + [(r, "no") for r in NO] + [(r, "neither") for r in NEITHER]
    )
    items = [
        {
            "id": f"t-{i}",
            "domain": "sales",
            "change": {"field": "supplier", "value": "Initech"},
            "question": QUESTION,
            "reply": reply,
            "language": "es" if reply.startswith("sí") else "en",
            "label": label,
        }
        for i, (reply, label) in enumerate(labelled)
    ]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "replies-t.yaml").write_text(yaml.safe_dump(items), encoding="utf-8")
    return directory


def test_replies_files_give_question_and_reply_pairs(tmp_path: Path) -> None:
    pairs = pairs_in([_corpus(tmp_path / "corpus")])
    assert len(pairs) == len(YES + NO + NEITHER)
    assert {p.question for p in pairs} == {QUESTION}
    assert pairs[0].reply == YES[0]
    assert pairs[0].label == "yes"
    assert pairs[0].language == "en"


def test_a_glob_chooses_which_labelled_files_are_read(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    (corpus / "replies-t.yaml").rename(corpus / "replies-c-01.yaml")
    other = yaml.safe_dump([{**yaml.safe_load((corpus / "replies-c-01.yaml").read_text())[0]}])
    (corpus / "replies-e-01.yaml").write_text(other, encoding="utf-8")
    assert len(pairs_in([corpus])) == len(YES + NO + NEITHER) + 1
    assert len(pairs_in([corpus], ("replies-[cd]-*.yaml",))) == len(YES + NO + NEITHER)


def test_the_threshold_lies_above_every_pair_that_is_not_a_yes() -> None:
    p = np.array(
        [[0.99, 0.0, 0.01], [0.7, 0.2, 0.1], [0.81, 0.1, 0.09], [0.3, 0.6, 0.1]],
        dtype=np.float32,
    )
    labels = ["yes", "yes", "no", "neither"]
    threshold = yes_threshold(p, labels)
    assert 0.81 < threshold <= 0.811
    assert figures(p, labels, threshold) == {
        "pairs": 4.0,
        "yeses": 2.0,
        "yes_accepted": 0.5,
        "false_yes": 0.0,
        "accuracy": 0.5,
    }
    floor = np.array([[0.9, 0.1, 0.0], [0.1, 0.9, 0.0]], dtype=np.float32)
    assert yes_threshold(floor, ["yes", "no"]) == 0.5


async def test_a_head_trained_from_a_corpus_reads_pairs_with_no_false_yes(
    tmp_path: Path,
) -> None:
    embedder = HashingEmbedder(64)
    out = tmp_path / "answer-head.npz"
    done = await train_answer_head(embedder, [_corpus(tmp_path / "corpus")], out)
    assert done["out_of_fold"]["false_yes"] == 0.0  # type: ignore[index]
    assert set(done["out_of_fold_by_language"]) == {"en", "not_en"}  # type: ignore[arg-type]
    judge = PairAnswerJudge.load(embedder, out, str(done["sha256"]))
    assert judge.heads.yes_min == done["yes_min"]
    said = await judge.answers([(QUESTION, r) for r in NO + NEITHER])
    assert Reply.YES not in said
    assert set(said) <= {Reply.NO, Reply.NEITHER}


async def test_a_corpus_without_pairs_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no labelled"):
        await train_answer_head(HashingEmbedder(64), [tmp_path / "empty"], tmp_path / "x.npz")


def test_the_command_writes_the_head_it_names(tmp_path: Path) -> None:
    out = tmp_path / "candidate.npz"
    main(["answers", "--corpus", str(_corpus(tmp_path / "corpus")), "--out", str(out)])
    assert out.exists()
    judge = PairAnswerJudge.load_over_packaged_encoder(out, None)
    assert judge.heads.model_id == "use-multilingual-v3"
