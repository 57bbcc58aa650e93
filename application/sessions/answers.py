"""A confirmation is the subject's answer to the question about that change.

- An agent's line may ask about one pending change (`asks`); the subject's next line is the
  answer, judged by the `SentenceJudge` in the words it was said: a yes confirms that
  change, a no declines it, anything else leaves it pending.
- A caller may state what it heard (`confirms` / `declines`), but only about the change the
  question asked about, and only when the judge hears the same: a confirmation on a line
  that is not a yes, or a decline on a yes, is refused (`AnswerMismatchError`).
- Without a judge (its heads did not load) nothing is confirmed by conversation: an unmarked
  answer decides nothing, a caller's `confirms` is refused (`JudgeUnavailableError`), so the
  change stays pending. A decline stays possible: it never puts a value in a profile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from factledger.application.judgement.ports import SentenceJudge
from factledger.application.judgement.types import Reply
from factledger.application.ledger.ledger import Ledger
from factledger.domain.events import SessionRecorded
from factledger.domain.proposal import check_subject_words
from factledger.domain.provenance import ChangeStatus, Evidence
from factledger.domain.sessions import transcript_from_payload
from factledger.domain.transcript import Message, MessageDecision, Role, Verdict


class AnswerMismatchError(ValueError):
    """The caller's `confirms` / `declines` is not what the subject's line answers."""

    def __init__(self, field: str, detail: str) -> None:
        super().__init__(detail)
        self.field = field
        self.detail = detail


class JudgeUnavailableError(RuntimeError):
    """No judge of answers in this process: confirmations by conversation are closed."""


@dataclass(frozen=True, slots=True)
class Question:
    """The agent's line that asked about a change."""

    text: str
    change_id: UUID


def question_before(previous: Message | None) -> Question | None:
    """The question the subject's next line answers: the agent's line just before it, when
    it asked about a change (any other line in between and the answer answers nothing)."""
    if previous is None or previous.role is not Role.AGENT or previous.decides is None:
        return None
    if previous.decides.verdict is not Verdict.ASKS:
        return None
    return Question(previous.text, previous.decides.change_id)


async def judged_decision(
    judge: SentenceJudge | None,
    question: Question | None,
    reply: str,
    stated: MessageDecision | None,
) -> MessageDecision | None:
    """What the subject's `reply` decides: the caller's `stated` decision when it is the
    answer the judge hears to the question about that change, the judged answer when the
    caller states none. Raises `AnswerMismatchError` or `JudgeUnavailableError`."""
    if stated is not None:
        field = stated.verdict.value
        if question is None or question.change_id != stated.change_id:
            raise AnswerMismatchError(
                field,
                f"the agent's line before this one did not ask about change {stated.change_id} "
                "(mark the question with `asks`): a yes to another question decides nothing",
            )
        if judge is None:
            if stated.verdict is Verdict.CONFIRMS:
                raise JudgeUnavailableError("the answer classifier is unavailable")
            return stated
        reply_is = (await judge.answers([(question.text, reply)]))[0]
        if stated.verdict is Verdict.CONFIRMS and reply_is is not Reply.YES:
            raise AnswerMismatchError(
                field, f"the subject's line is not a yes to the question (it reads as {reply_is})"
            )
        if stated.verdict is Verdict.DECLINES and reply_is is Reply.YES:
            raise AnswerMismatchError(field, "the subject's line is a yes to the question")
        return stated
    if question is None or judge is None:
        return None
    reply_is = (await judge.answers([(question.text, reply)]))[0]
    if reply_is is Reply.YES:
        return MessageDecision(Verdict.CONFIRMS, question.change_id)
    if reply_is is Reply.NO:
        return MessageDecision(Verdict.DECLINES, question.change_id)
    return None


def cited_transcript(
    ledger: Ledger, tenant: str, subject_id: UUID, change_id: UUID, evidence: Evidence
) -> Sequence[Message] | None:
    """The recorded transcript a subject's confirmation of a pending change cites, once the
    confirmation rules hold (the answer follows the question about that change, is a yes, and
    cites the subject's own words; each broken rule raises its named error); None when the
    ledger answers the request itself (a change decided already). Blocking: run it in a thread."""
    subject = ledger.subject(tenant, subject_id)
    record = subject.change(change_id)
    if record.status is not ChangeStatus.PENDING:
        return None
    check_subject_words(record, evidence, subject.sessions)
    for event in ledger.repository.event_store.get(subject_id):
        if isinstance(event, SessionRecorded) and event.session_id == evidence.session_id:
            return transcript_from_payload(event.transcript or [])
    return None


async def check_answer(
    judge: SentenceJudge | None, transcript: Sequence[Message], index: int, change_id: UUID
) -> None:
    """A subject's line cited as their confirmation of `change_id` must be a yes to the
    agent's question about it, just before. Raises like `judged_decision`."""
    if not 0 <= index < len(transcript) or transcript[index].role is not Role.SUBJECT:
        return  # the ledger names what is wrong with such evidence
    question = question_before(transcript[index - 1] if index > 0 else None)
    stated = MessageDecision(Verdict.CONFIRMS, change_id)
    await judged_decision(judge, question, transcript[index].text, stated)
