"""The tuned encoder's trainer (lab only: skipped where torch is not installed): its torch port
reads as the packaged numpy encoder does, and what it writes the product reads as torch did.
The pairs were written for this test."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

torch = pytest.importorskip("torch")

from factledger.adapters.embedding.use_multilingual import package_layers  # noqa: E402
from factledger.adapters.judgement.cross_use import CROSS_LAYERS  # noqa: E402
from factledger.adapters.judgement.tuned_answers_file import TunedAnswers  # noqa: E402
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge  # noqa: E402
from factledger.bench.judgement.answers import LabelledPair  # noqa: E402
from factledger.bench.judgement.usem.model import TunedUse, padded  # noqa: E402
from factledger.bench.judgement.usem.rows import WordPieceRows  # noqa: E402
from factledger.bench.judgement.usem.train import (  # noqa: E402
    TuneRecipe,
    fit,
    shorter_file,
    train_tuned_use,
)

PAIRS = [
    LabelledPair("Is your plan still Basic?", "yes, still Basic", "yes", "en"),
    LabelledPair("Is your plan still Basic?", "no, Premium now", "no", "en"),
    LabelledPair("Sigue en Valencia?", "sí", "yes", "es"),
    LabelledPair("Sigue en Valencia?", "ya no, me mudé", "no", "es"),
    LabelledPair("Is your email still the old one?", "why do you ask?", "neither", "en"),
    LabelledPair("Ihre Nummer ist noch dieselbe?", "ja, genau", "yes", "de"),
]


@pytest.fixture(scope="module")
def rows() -> WordPieceRows:
    return WordPieceRows()


def test_the_torch_port_reads_as_the_packaged_encoder(rows: WordPieceRows) -> None:
    texts = sorted({t for p in PAIRS for t in (p.question, p.reply)})
    model = TunedUse(package_layers(), "all")
    with torch.no_grad():
        x, mask, lengths = padded(rows.many(texts))
        ported = model.from_sums(model.token_sums(x, mask), lengths).numpy()
    packaged = rows.encoder.encode(texts)
    cosine = (ported * packaged).sum(axis=1)  # both L2-normalised
    assert cosine.min() >= 0.9999


def test_what_the_trainer_writes_the_product_reads_as_torch_did(tmp_path: Path) -> None:
    recipe = TuneRecipe(epochs=1, batch=3, learning_rate=1e-3, ema=0.0, seed=3)
    [epoch] = fit(PAIRS, PAIRS, recipe, tmp_path / "run.json")
    file = tmp_path / "tuned.npz"
    file.write_bytes(TunedAnswers((epoch.member, epoch.member), 0.9).to_bytes())
    # The layers moved, and the numpy reader of the file (int8 deltas, two members averaged)
    # gives the probabilities torch gave.
    assert np.abs(epoch.member.deltas["d0"]).max() > 0
    judge = TunedUseAnswerJudge.load(file, None)
    read = judge.probabilities_sync([(p.question, p.reply) for p in PAIRS])
    np.testing.assert_allclose(read, epoch.kept_out, atol=0.005)


def test_the_cross_reader_the_trainer_writes_the_product_reads_as_torch_did(
    tmp_path: Path,
) -> None:
    recipe = TuneRecipe(epochs=1, batch=3, learning_rate=1e-3, ema=0.0, seed=3, cross=True)
    [epoch] = fit(PAIRS, PAIRS, recipe, tmp_path / "run.json")
    assert set(epoch.member.cross) == set(CROSS_LAYERS)
    file = tmp_path / "cross.npz"
    file.write_bytes(TunedAnswers((epoch.member,), 0.9).to_bytes())
    # numpy over the int8 deltas and attention layers gives what torch gave.
    judge = TunedUseAnswerJudge.load(file, None)
    read = judge.probabilities_sync([(p.question, p.reply) for p in PAIRS])
    np.testing.assert_allclose(read, epoch.kept_out, atol=0.01)


def _corpus(directory: Path) -> Path:
    """Labelled replies in the corpus format: enough questions that the hash split keeps some
    out (one in five) and trains on the rest."""
    items = []
    for n in range(15):
        question = f"Is your locker number still {n}?"
        for reply, label in (
            ("yes, still {n}", "yes"),
            ("no, it changed", "no"),
            ("why?", "neither"),
        ):
            items.append(
                {
                    "id": f"t-{n}-{label}",
                    "domain": "gym",
                    "change": {"field": "locker", "value": str(n)},
                    "question": question,
                    "reply": reply.format(n=n),
                    "language": "en",
                    "label": label,
                }
            )
    directory.mkdir()
    (directory / "replies-t-01.yaml").write_text(yaml.safe_dump(items), encoding="utf-8")
    return directory


def test_seeds_trained_at_once_and_cut_at_fewer_epochs_write_the_one_run_file(
    tmp_path: Path,
) -> None:
    corpus = _corpus(tmp_path / "corpus")
    recipe = TuneRecipe(epochs=2, batch=8, learning_rate=1e-3, compound=0.0)
    both = train_tuned_use(
        [corpus], tmp_path / "both.npz", recipe, seeds=(1, 2), jobs=2, also_at=(1,)
    )
    one = train_tuned_use(
        [corpus], tmp_path / "one.npz", replace(recipe, epochs=1), seeds=(1, 2), jobs=1
    )
    assert both["kept_out"] == one["kept_out"] > 0
    cut = shorter_file(tmp_path / "both.npz", 1)
    assert cut.read_bytes() == (tmp_path / "one.npz").read_bytes()
    assert both["shorter"] == {
        1: {k: one[k] for k in ("chosen", "kept_out_as_read", "yes_min", "sha256")}
    }


def test_finer_points_read_the_kept_out_pairs_mid_epoch_and_leave_the_epoch_unchanged(
    tmp_path: Path,
) -> None:
    recipe = TuneRecipe(epochs=1, batch=2, learning_rate=1e-3, seed=5)
    [whole] = fit(PAIRS, PAIRS, recipe, tmp_path / "whole.json")
    halves = fit(PAIRS, PAIRS, replace(recipe, points=2), tmp_path / "halves.json")
    # Three batches of two: a point after batch 1 (3 * 1 // 2 = 1), and one at the end.
    assert [h.row["pairs_seen"] for h in halves] == [2, 6]
    # Reading mid-epoch consumes nothing the training draws on: the epoch's end is the same.
    np.testing.assert_array_equal(halves[-1].kept_out, whole.kept_out)
    np.testing.assert_array_equal(halves[-1].member.deltas["d0"], whole.member.deltas["d0"])
    assert not np.array_equal(halves[0].kept_out, whole.kept_out)
