"""The shipped pair answer judge: it loads only files that match their pins, and reads a
reply together with the question it answers, in several languages. The pairs below were
written for this test; none is taken from a corpus or an evaluation set."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.use_multilingual import (
    UseIntegrityError,
    UseMultilingualEmbedder,
    resources_dir,
    verify,
)
from factledger.adapters.judgement.heads import Heads, HeadsIntegrityError
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.pair_answers import (
    HEAD,
    PACKAGED_ANSWER_HEAD,
    PACKAGED_ANSWER_HEAD_SHA256,
    AnswerEncoderMismatchError,
    PairAnswerJudge,
)
from factledger.application.judgement.types import Reply


@pytest.fixture(scope="module")
def judge() -> PairAnswerJudge:
    return PairAnswerJudge.packaged()


def test_a_head_file_that_differs_from_its_pin_is_refused(tmp_path: Path) -> None:
    altered = tmp_path / "answer-pair-head.npz"
    altered.write_bytes(PACKAGED_ANSWER_HEAD.read_bytes() + b"\0")
    with pytest.raises(HeadsIntegrityError, match="sha256 differs"):
        PairAnswerJudge.load_over_packaged_encoder(altered, PACKAGED_ANSWER_HEAD_SHA256)
    with pytest.raises(HeadsIntegrityError, match="not readable"):
        PairAnswerJudge.load_over_packaged_encoder(tmp_path / "absent.npz", None)


def test_encoder_files_that_differ_from_their_pins_are_refused(tmp_path: Path) -> None:
    copy = tmp_path / "resources"
    shutil.copytree(resources_dir(), copy)
    verify(copy)  # the packaged files pass
    with (copy / "sp.model").open("ab") as f:
        f.write(b"\0")
    with pytest.raises(UseIntegrityError, match=r"sp\.model"):
        UseMultilingualEmbedder(copy).load()
    (copy / "weights.npz").unlink()
    with pytest.raises(UseIntegrityError, match=r"weights\.npz"):
        verify(copy)


async def test_the_encoder_files_are_checked_at_its_load_not_when_the_judge_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "resources"
    shutil.copytree(resources_dir(), copy)
    with (copy / "weights.npz").open("ab") as f:
        f.write(b"\0")
    monkeypatch.setattr(
        "factledger.adapters.judgement.pair_answers.UseMultilingualEmbedder",
        lambda: UseMultilingualEmbedder(copy),
    )
    # A start reads none of the encoder's 32 MB: making the judge succeeds...
    judge = PairAnswerJudge.load_over_packaged_encoder(
        PACKAGED_ANSWER_HEAD, PACKAGED_ANSWER_HEAD_SHA256
    )
    # ...and the altered file is refused when the encoder first loads.
    with pytest.raises(UseIntegrityError, match=r"weights\.npz"):
        await judge.answers([("Is it 4 Mill Lane?", "Yes.")])


def test_a_head_refuses_an_encoder_it_was_not_trained_over() -> None:
    heads = Heads.load(PACKAGED_ANSWER_HEAD, PACKAGED_ANSWER_HEAD_SHA256, (HEAD,))
    with pytest.raises(AnswerEncoderMismatchError, match="needs the encoder"):
        PairAnswerJudge(HashingEmbedder(512), heads)


async def test_plain_answers_to_the_question_asked_are_read_in_several_languages(
    judge: PairAnswerJudge,
) -> None:
    pairs = {
        ("Is your monthly budget still 2,000 euros?", "Yes, that's right."): Reply.YES,
        ("Vous habitez toujours à Lyon ?", "Oui, c'est exact."): Reply.YES,
        ("Wohnen Sie noch in Köln?", "Ja."): Reply.YES,
        ("Your preferred contact is email, correct?", "No, that's wrong."): Reply.NO,
        ("¿Su plan actual es el básico?", "No, ya no."): Reply.NO,
        ("Is the delivery address 4 Mill Lane?", "Hm, I'd need to check my notes."): Reply.NEITHER,
    }
    got = await judge.answers(list(pairs))
    assert dict(zip(pairs, got, strict=True)) == pairs


async def test_a_yes_it_is_not_sure_of_stays_pending_rather_than_declined(
    judge: PairAnswerJudge,
) -> None:
    # The yes bar is high (no training reply that is not a yes may clear it), so a longer
    # yes can fall short of it; it must then leave the change pending, never decline it.
    question = "Ist Ihre Kundennummer 55 12 30?"
    (yes, no, neither), *_ = await judge.probabilities([(question, "Ja, genau, das ist sie.")])
    assert yes > max(no, neither)
    assert await judge.answers([(question, "Ja, genau, das ist sie.")]) in (
        [Reply.YES],
        [Reply.NEITHER],
    )


async def test_a_reply_that_corrects_or_avoids_the_question_is_never_a_yes(
    judge: PairAnswerJudge,
) -> None:
    pairs = [
        ("Your new phone number is 0161 555 0199?", "No, it ends in 0919, not 0199."),
        ("Shall I move you to the Premium plan?", "Absolutely not."),
        ("Do you still work at Globex?", "Not any more, I left in spring."),
        ("Is your car a 2018 Golf?", "Why do you need to know that?"),
        ("Ist Ihre E-Mail-Adresse noch die alte?", "Nein, die hat sich geändert."),
    ]
    assert Reply.YES not in await judge.answers(pairs)
    assert await judge.answers([]) == []


async def test_the_packaged_judge_reads_answers_with_the_pair_judge(
    judge: PairAnswerJudge,
) -> None:
    learned = LearnedJudge.packaged()
    assert learned.pair_answers is not None
    pairs = [
        ("Is your plan still Basic?", "Nope, we went Premium."),
        ("Is your monthly budget still 2,000 euros?", "Yes, that's right."),
    ]
    assert await learned.answers(pairs) == await judge.answers(pairs) == [Reply.NO, Reply.YES]


async def test_a_yes_only_one_reader_is_sure_of_leaves_the_change_pending(
    judge: PairAnswerJudge,
) -> None:
    learned = LearnedJudge.packaged()
    pair = ("Is your plan still Basic?", "mhm")
    # The pair judge takes a murmur after a yes/no question as a yes; the reply-only head
    # is not sure of it, so the packaged judge confirms nothing.
    assert await judge.answers([pair]) == [Reply.YES]
    assert await learned.reply_answers([pair]) != [Reply.YES]
    assert await learned.answers([pair]) == [Reply.NEITHER]
