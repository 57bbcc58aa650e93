"""A sentence the forget flag leans to read as a request, in a line with no request, is one when
the judge reads that line and the agent's next one together as a removal asked for and
confirmed (ADR 0209): pending on the field it concerns, kept out of the extractor and the
memories like any request. The agent's line alone asks nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from uuid import UUID

from factledger.application.judgement.types import Judgement, Statement
from factledger.application.memory.record_ids import namespace_for
from factledger.application.review.forget_requests import (
    LIFT_MIN,
    SaidRequest,
    said_requests,
)
from factledger.domain.provenance import ChangeStatus, Operation
from factledger.domain.transcript import Message, Role

from .conftest import Rig, day
from .test_forget_requests_said import AGENT, LEAD, PhraseJudge, _requests, _with_budget, worker

LEANING = "Take the 40k off, we're reworking it."
ACKNOWLEDGED = "Done, the 40k is removed from your file."


@dataclass(frozen=True)
class AcknowledgingJudge(PhraseJudge):
    """`PhraseJudge`, which also reads a sentence starting "Take" as leaning to ask (the flag
    at `lean`, under its own bar) and a pair whose agent's line holds "removed" as a removal
    confirmed; it keeps the pairs it was asked."""

    lean: float = LIFT_MIN + 0.05
    asked: list[tuple[str, str]] = field(default_factory=list)

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]:
        judged = await super().judge(sentences)
        return [
            Judgement(
                Statement.SELF,
                0.9,
                hedged=False,
                forget_request=j.forget_request,
                correction=False,
                forget_p=0.95 if j.forget_request else self.lean if s.startswith("Take") else 0.01,
            )
            for s, j in zip(sentences, judged, strict=True)
        ]

    async def confirmed_removals(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.asked.extend(pairs)
        return [0.9 if "removed" in agent else 0.1 for _, agent in pairs]


def _said(*lines: tuple[Role, str]) -> list[Message]:
    return [Message(role, text) for role, text in lines]


async def test_the_leaning_sentence_of_a_line_the_agent_confirms_is_a_request() -> None:
    line = f"We are still deciding. {LEANING}"
    transcript = _said((AGENT, "Anything else?"), (LEAD, line), (AGENT, ACKNOWLEDGED))
    judge = AcknowledgingJudge()
    assert await said_requests(transcript, judge) == [SaidRequest(1, LEANING)]
    # Read together: the subject's whole line and the agent's next one.
    assert judge.asked == [(line, ACKNOWLEDGED)]


async def test_no_confirmation_no_lift() -> None:
    transcript = _said((LEAD, LEANING), (AGENT, "Noted, anything else?"))
    assert await said_requests(transcript, AcknowledgingJudge()) == []


async def test_a_sentence_under_the_lift_bar_stays_what_it_was() -> None:
    transcript = _said((LEAD, LEANING), (AGENT, ACKNOWLEDGED))
    assert await said_requests(transcript, AcknowledgingJudge(lean=LIFT_MIN - 0.01)) == []


async def test_only_the_agents_next_line_lifts_and_only_the_line_before_it() -> None:
    # The subject's next line, or a confirmation two lines on, lifts nothing.
    said_twice = _said((LEAD, LEANING), (LEAD, "Also the kitchen."), (AGENT, ACKNOWLEDGED))
    assert await said_requests(said_twice, AcknowledgingJudge()) == []
    late = _said((LEAD, LEANING), (AGENT, "One moment."), (LEAD, "Sure."), (AGENT, ACKNOWLEDGED))
    assert await said_requests(late, AcknowledgingJudge()) == []


async def test_a_line_with_a_request_is_not_lifted_again() -> None:
    transcript = _said(
        (LEAD, f"Please delete what I told you about our budget. {LEANING}"),
        (AGENT, ACKNOWLEDGED),
    )
    found = await said_requests(transcript, AcknowledgingJudge())
    assert found == [SaidRequest(0, "Please delete what I told you about our budget.")]


async def test_the_agents_confirmation_alone_asks_nothing() -> None:
    transcript = _said((LEAD, "Our budget is 40k."), (AGENT, ACKNOWLEDGED))
    assert await said_requests(transcript, AcknowledgingJudge()) == []


async def test_a_lifted_request_is_pending_on_its_field_and_no_memory(rig: Rig) -> None:
    judge = AcknowledgingJudge()
    lead = await _with_budget(rig, judge)
    rig.record(
        lead,
        "s2",
        day(4, 3),
        (AGENT, "Anything else?"),
        (LEAD, f"We are still deciding. {LEANING}"),
        (AGENT, ACKNOWLEDGED),
    )
    await worker(rig, judge).run_once()
    (request,) = _requests(rig, lead)
    assert request.field == "budget"
    assert request.status is ChangeStatus.PENDING
    assert request.proposal.evidence is not None
    assert request.proposal.evidence.quote == LEANING  # the subject's words, not the agent's
    assert not _remembered(rig, lead, "Take the 40k off")
    s2 = [
        c
        for c in rig.subject(lead).changes.values()
        if c.proposal.evidence is not None and c.proposal.evidence.session_id == "s2"
    ]
    assert [c.operation for c in s2] == [Operation.FORGET]


async def test_with_a_judge_that_reads_no_confirmation_the_sentence_stays_said(rig: Rig) -> None:
    judge = PhraseJudge()
    lead = await _with_budget(rig, judge)
    rig.record(
        lead, "s2", day(4, 3), (LEAD, f"We are still deciding. {LEANING}"), (AGENT, ACKNOWLEDGED)
    )
    await worker(rig, judge).run_once()
    assert _requests(rig, lead) == []
    assert _remembered(rig, lead, "Take the 40k off")


def _remembered(rig: Rig, lead: UUID, words: str) -> bool:
    space = rig.backend._spaces[namespace_for(lead)]
    return any(words in m.text for doc in space.documents.values() for m in doc.transcript)
