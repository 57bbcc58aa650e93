"""The shipped reader of removals the agent confirms (ADR 0209): it loads offline from the
package (SHA-256 pinned) and reads a subject's line and the agent's answer together: a request
to take a detail off the file that the agent says is done reads over the bar, in English and in
German; the same agent's words after a request to cancel a visit, a request the agent does not
confirm, and an ordinary exchange read under it. A judge given the reader reads pairs by it;
one without reads 0.0, as does one whose encoder cannot load (logged). None of these pairs is
in the reader's training pairs."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import structlog

from factledger.adapters.judgement.confirmations import (
    PACKAGED_REMOVAL_CONFIRMATIONS,
    PACKAGED_REMOVAL_CONFIRMATIONS_SHA256,
    RemovalConfirmationReader,
    at_half,
)
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tuned_answers_file import TunedAnswersIntegrityError
from factledger.application.errors import ModelUnavailableError
from factledger.application.review.forget_requests import CONFIRMED_MIN

CONFIRMED = (
    (
        "Quick one: please take my old mobile number off my file, I don't use it anymore.",
        "No problem, the old mobile number is gone from your file.",
    ),
    (
        "Und bitte streichen Sie meinen Arbeitgeber aus Ihren Notizen.",
        "Erledigt, Ihr Arbeitgeber ist aus unseren Notizen gelöscht.",
    ),
)
NOT_CONFIRMED = (
    (
        "Can you cancel the engineer visit on Monday please?",
        "No problem, the Monday visit is gone from the schedule.",
    ),
    (
        "Please take my old mobile number off my file.",
        "Which number do you mean, the one ending in 77?",
    ),
    ("My new number is 0612 345 678.", "Thanks, I've updated it."),
)


@pytest.fixture(scope="module")
def reader() -> RemovalConfirmationReader:
    return RemovalConfirmationReader.packaged()


async def test_a_confirmed_removal_reads_over_the_bar_and_look_alikes_under(
    reader: RemovalConfirmationReader,
) -> None:
    confirmed = await reader.confirmed(list(CONFIRMED))
    others = await reader.confirmed(list(NOT_CONFIRMED))
    assert all(p >= CONFIRMED_MIN for p in confirmed), confirmed
    assert all(p < CONFIRMED_MIN for p in others), list(zip(NOT_CONFIRMED, others, strict=True))


def test_the_reading_is_moved_so_the_files_threshold_reads_half() -> None:
    assert at_half(0.8, 0.8) == pytest.approx(0.5)
    assert at_half(0.9, 0.8) > 0.5 > at_half(0.7, 0.8)


def test_the_shipped_file_is_pinned() -> None:
    with pytest.raises(TunedAnswersIntegrityError):
        RemovalConfirmationReader.load(PACKAGED_REMOVAL_CONFIRMATIONS, "0" * 64)
    RemovalConfirmationReader.load(
        PACKAGED_REMOVAL_CONFIRMATIONS, PACKAGED_REMOVAL_CONFIRMATIONS_SHA256
    )


class _Unloadable:
    async def confirmed(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        raise ModelUnavailableError("the multilingual encoder could not load")


async def test_a_judge_reads_by_its_reader_and_zero_without_one_or_when_it_cannot_load(
    reader: RemovalConfirmationReader,
) -> None:
    judge = LearnedJudge.packaged()
    with_reader = LearnedJudge(judge.embedder, judge.heads, confirmations=reader)
    pairs = [CONFIRMED[0], NOT_CONFIRMED[0]]
    assert await with_reader.confirmed_removals(pairs) == await reader.confirmed(pairs)
    assert await judge.confirmed_removals(pairs) == [0.0, 0.0]
    failing = LearnedJudge(judge.embedder, judge.heads, confirmations=_Unloadable())
    with structlog.testing.capture_logs() as logs:
        assert await failing.confirmed_removals(pairs) == [0.0, 0.0]
    assert any(
        e["event"] == "removal_confirmations_unavailable"
        and e["error_type"] == "ModelUnavailableError"
        for e in logs
    )
