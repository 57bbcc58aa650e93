"""The tuned multilingual encoder's reader of replies: its file is read only once it matches its
pin and names the encoder and classes; the tuned deltas are added to the package's layers in
the package's forward pass; the shipped file reads plain replies in several languages. The pairs
below were written for this test; none is taken from a corpus or an evaluation set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from factledger.adapters.embedding.use_multilingual import (
    UseMultilingualEmbedder,
    package_layers,
    resources_dir,
    shared_encoder,
    tuned_encoder,
)
from factledger.adapters.judgement.cross_use import (
    CROSS_DIM,
    CROSS_LAYERS,
    FEATURE_DIM,
    cross_features,
    rows_of,
)
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.pair_answers import (
    PACKAGED_ANSWER_HEAD,
    PACKAGED_ANSWER_HEAD_SHA256,
    PairAnswerJudge,
)
from factledger.adapters.judgement.tuned_answers_file import (
    TunedAnswers,
    TunedAnswersIntegrityError,
    TunedMember,
)
from factledger.adapters.judgement.tuned_use import (
    PACKAGED_TUNED_ANSWERS,
    PACKAGED_TUNED_ANSWERS_SHA256,
    TunedUseAnswerJudge,
)
from factledger.api.bootstrap.judgement import answer_judge
from factledger.api.settings.extraction import ExtractionSettings, RuleExtractorSettings
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.judgement.types import Reply

SENTENCES = ["Is your plan still Basic?", "Oui, depuis janvier.", "nein"]


@pytest.fixture(scope="module")
def judge() -> TunedUseAnswerJudge:
    return TunedUseAnswerJudge.packaged()


def test_no_delta_reproduces_the_packaged_vectors_and_a_delta_moves_them() -> None:
    own = package_layers()
    packaged = UseMultilingualEmbedder().embed_sync(SENTENCES)
    same = tuned_encoder(resources_dir(), {}).encode(SENTENCES)
    np.testing.assert_allclose(same, packaged, atol=1e-6)
    moved = tuned_encoder(resources_dir(), {"d3": own["d3"] * -0.5}).encode(SENTENCES)
    assert np.abs(moved - packaged).max() > 1e-3
    # The packaged encoder is untouched by a tuned copy made beside it.
    np.testing.assert_allclose(UseMultilingualEmbedder().embed_sync(SENTENCES), packaged)


def test_a_file_that_differs_from_its_pin_or_is_none_is_refused(tmp_path: Path) -> None:
    altered = tmp_path / "answer-tuned-use.npz"
    altered.write_bytes(PACKAGED_TUNED_ANSWERS.read_bytes() + b"\0")
    with pytest.raises(TunedAnswersIntegrityError, match="sha256 differs"):
        TunedAnswers.load(altered, PACKAGED_TUNED_ANSWERS_SHA256)
    with pytest.raises(TunedAnswersIntegrityError, match="not readable"):
        TunedAnswers.load(tmp_path / "absent.npz", None)
    with pytest.raises(TunedAnswersIntegrityError, match="not a tuned answer file"):
        TunedAnswers.load(PACKAGED_ANSWER_HEAD, PACKAGED_ANSWER_HEAD_SHA256)


def test_a_file_round_trips_and_one_naming_an_unknown_layer_is_refused(tmp_path: Path) -> None:
    head = np.zeros((4 * 512, 3), dtype=np.float32)
    bias = np.zeros(3, dtype=np.float32)
    rng = np.random.default_rng(0)
    matrix = rng.normal(0, 0.01, (512, 512)).astype(np.float32)
    vector = rng.normal(0, 0.01, 512).astype(np.float32)
    members = (
        TunedMember({"d3": matrix, "cnn_b": vector}, head, bias),
        TunedMember({"w1_5": np.ones((1280, 256), dtype=np.float32)}, head, bias),
    )
    path = tmp_path / "own.npz"
    path.write_bytes(TunedAnswers(members, 0.9).to_bytes())
    back = TunedAnswers.load(path, None)
    assert [set(m.deltas) for m in back.members] == [{"d3", "cnn_b"}, {"w1_5"}]
    # A matrix's delta comes back within half a step of its column's int8 scale.
    step = np.abs(matrix).max(axis=0) / 127
    assert (np.abs(back.members[0].deltas["d3"] - matrix) <= step / 2 + 1e-9).all()
    np.testing.assert_array_equal(back.members[0].deltas["cnn_b"], vector)
    assert back.yes_min == pytest.approx(0.9)
    unknown = TunedAnswers((TunedMember({"q1": head}, head, bias),), 0.9)
    path.write_bytes(unknown.to_bytes())
    with pytest.raises(TunedAnswersIntegrityError, match="unknown layer q1"):
        TunedAnswers.load(path, None)


async def test_the_shipped_file_reads_plain_yeses_and_noes_in_several_languages(
    judge: TunedUseAnswerJudge,
) -> None:
    pairs = [
        ("Is your delivery address still 14 Harbour Road?", "Yes, that's right."),
        ("¿Sigue con el plan básico?", "Sí, sigo con el básico."),
        ("Is your plan still Basic?", "No, we moved to Premium last month."),
        ("Ihre E-Mail-Adresse ist noch die alte?", "Nein, die hat sich geändert."),
        ("Is your car a 2018 Golf?", "Why do you need to know that?"),
    ]
    said = await judge.answers(pairs)
    assert said[:2] == [Reply.YES, Reply.YES]
    assert said[2:4] == [Reply.NO, Reply.NO]
    assert said[4] is not Reply.YES
    assert await judge.answers([]) == []


async def test_the_packaged_judge_reads_replies_with_the_tuned_encoder() -> None:
    learned = LearnedJudge.packaged()
    assert isinstance(learned.pair_answers, TunedUseAnswerJudge)


def _own_file(tmp_path: Path, source: Path, sha256: str) -> SentenceJudge | None:
    own = tmp_path / source.name
    own.write_bytes(source.read_bytes())
    settings = ExtractionSettings(answer_head_path=own, answer_head_sha256=sha256)
    return answer_judge(RuleExtractorSettings(), settings)


def test_a_deployments_own_file_is_read_as_what_it_holds(tmp_path: Path) -> None:
    tuned = _own_file(tmp_path, PACKAGED_TUNED_ANSWERS, PACKAGED_TUNED_ANSWERS_SHA256)
    assert isinstance(tuned, LearnedJudge)
    assert isinstance(tuned.pair_answers, TunedUseAnswerJudge)
    head = _own_file(tmp_path, PACKAGED_ANSWER_HEAD, PACKAGED_ANSWER_HEAD_SHA256)
    assert isinstance(head, LearnedJudge)
    assert isinstance(head.pair_answers, PairAnswerJudge)
    assert _own_file(tmp_path, PACKAGED_TUNED_ANSWERS, "1" * 64) is None


def _cross_member(rng: np.random.Generator) -> TunedMember:
    cross = {
        name: rng.normal(
            0, 0.05, (3 * CROSS_DIM if ".mix." in name else FEATURE_DIM, CROSS_DIM)
        ).astype(np.float32)
        if name.endswith(".w")
        else np.zeros(CROSS_DIM, dtype=np.float32)
        for name in CROSS_LAYERS
    }
    head = rng.normal(0, 0.05, (4 * 512 + 4 * CROSS_DIM, 3)).astype(np.float32)
    return TunedMember({}, head, np.zeros(3, dtype=np.float32), cross)


def test_a_cross_member_reads_the_reply_against_the_questions_words(tmp_path: Path) -> None:
    path = tmp_path / "cross.npz"
    path.write_bytes(TunedAnswers((_cross_member(np.random.default_rng(1)),), 0.9).to_bytes())
    judge = TunedUseAnswerJudge.load(path, None)
    [member] = judge.cross_members()
    rows = {t: rows_of(shared_encoder(resources_dir()), t) for t in SENTENCES}
    # With no deltas, the token features sum to the packaged encoder's vector.
    v = member.vector(member.token_features(rows[SENTENCES[0]]))
    np.testing.assert_allclose(v, UseMultilingualEmbedder().embed_sync(SENTENCES[:1])[0], atol=1e-5)
    # The same reply under two questions: its own vector is the same, its reading of the
    # question's tokens (and the question's of it) is not.
    a = cross_features(member, rows[SENTENCES[0]], [rows["nein"]])[0]
    b = cross_features(member, rows[SENTENCES[1]], [rows["nein"]])[0]
    np.testing.assert_allclose(a[512:1024], b[512:1024])
    assert np.abs(a[2048:] - b[2048:]).max() > 1e-4
    p = judge.probabilities_sync([(SENTENCES[0], "nein"), (SENTENCES[1], "nein")])
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)


def test_a_file_with_some_cross_layers_missing_is_refused(tmp_path: Path) -> None:
    member = _cross_member(np.random.default_rng(2))
    partial = TunedMember(
        {}, member.head_weights, member.head_bias, dict(list(member.cross.items())[1:])
    )
    path = tmp_path / "cross.npz"
    path.write_bytes(TunedAnswers((partial,), 0.9).to_bytes())
    with pytest.raises(TunedAnswersIntegrityError, match="cross layers incomplete"):
        TunedAnswers.load(path, None)
