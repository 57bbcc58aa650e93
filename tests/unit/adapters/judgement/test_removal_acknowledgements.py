"""The shipped removal acknowledgement head (ADR 0206): it loads offline from the package
(SHA-256 pinned), over the packaged multilingual encoder, and reads an agent's line that tells
the subject something of theirs was deleted, in English or German, over its bar, and lines that
cancel, update, instruct or offer with the same verbs under it. A judge given the head reads the
lines by it; one without reads 0.0, as does one whose encoder cannot load (logged). None of
these lines is in the head's training lines."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import structlog

from factledger.adapters.judgement.acknowledgements import (
    HEAD,
    PACKAGED_REMOVAL_ACK_HEAD,
    PACKAGED_REMOVAL_ACK_HEAD_SHA256,
    RemovalAcknowledgementHead,
)
from factledger.adapters.judgement.heads import Heads, HeadsIntegrityError
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.application.errors import ModelUnavailableError
from factledger.application.review.forget_requests import ACK_MIN

ACKNOWLEDGED = (
    "Certainly, your salary figure has been deleted from your profile and won't be shared.",
    "Erledigt, ich habe Ihre alte Adresse aus unseren Unterlagen gelöscht.",
)
NOT_ACKNOWLEDGED = (
    "Your Thursday appointment is cancelled.",
    "I've updated your budget to 450k.",
    "You can delete the app and reinstall it.",
    "Do you want me to delete your phone number?",
    "I'm afraid I can't delete claim records.",
    "I've deleted the duplicate ticket.",
)


@pytest.fixture(scope="module")
def head() -> RemovalAcknowledgementHead:
    return RemovalAcknowledgementHead.packaged()


async def test_acknowledged_removals_read_over_the_bar_and_look_alikes_under(
    head: RemovalAcknowledgementHead,
) -> None:
    acknowledged = await head.acknowledged(list(ACKNOWLEDGED))
    others = await head.acknowledged(list(NOT_ACKNOWLEDGED))
    assert all(p >= ACK_MIN for p in acknowledged), acknowledged
    assert all(p < ACK_MIN for p in others), list(zip(NOT_ACKNOWLEDGED, others, strict=True))
    assert min(acknowledged) > max(others)


async def test_an_acknowledgement_after_another_sentence_is_not_averaged_away(
    head: RemovalAcknowledgementHead,
) -> None:
    (alone,) = await head.acknowledged([ACKNOWLEDGED[0]])
    (after,) = await head.acknowledged([f"Thanks for calling back. {ACKNOWLEDGED[0]}"])
    assert after == pytest.approx(alone, abs=1e-6)


def test_the_shipped_file_is_pinned_and_names_its_encoder() -> None:
    heads = Heads.load(PACKAGED_REMOVAL_ACK_HEAD, PACKAGED_REMOVAL_ACK_HEAD_SHA256, (HEAD,))
    assert heads.model_id == RemovalAcknowledgementHead.default_embedder().model_id
    with pytest.raises(HeadsIntegrityError):
        Heads.load(PACKAGED_REMOVAL_ACK_HEAD, "0" * 64, (HEAD,))


class _Unloadable:
    async def acknowledged(self, lines: Sequence[str]) -> list[float]:
        raise ModelUnavailableError("the multilingual encoder could not load")


async def test_a_judge_reads_by_its_head_and_zero_without_one_or_when_it_cannot_load(
    head: RemovalAcknowledgementHead,
) -> None:
    judge = LearnedJudge.packaged()
    with_head = LearnedJudge(judge.embedder, judge.heads, acknowledgements=head)
    lines = [ACKNOWLEDGED[0], NOT_ACKNOWLEDGED[0]]
    assert await with_head.acknowledged_removals(lines) == await head.acknowledged(lines)
    assert await judge.acknowledged_removals(lines) == [0.0, 0.0]
    failing = LearnedJudge(judge.embedder, judge.heads, acknowledgements=_Unloadable())
    with structlog.testing.capture_logs() as logs:
        assert await failing.acknowledged_removals(lines) == [0.0, 0.0]
    assert any(
        e["event"] == "removal_acknowledgements_unavailable"
        and e["error_type"] == "ModelUnavailableError"
        for e in logs
    )
