"""The sentence judgement the blind runs use for forget requests and confirmation replies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from factledger.application.judgement.ports import SentenceJudge
from factledger.application.review.forget_requests import said_requests
from factledger.bench.evalsets.cases import Answer, Case
from factledger.domain.transcript import Message, Role


def judge_for(
    name: str,
    heads: Path | None = None,
    forget_reader: Path | None = None,
    heads_sha256: str | None = None,
) -> SentenceJudge | None:
    """`none`: the product as it was, with no judgement; `learned`: the judge the product
    composes from the run's files (the shipped heads and readers, or the heads file and
    reader of requests to forget given), so requests are counted as that run notices them."""
    if name == "none":
        return None
    from factledger.api.bootstrap.judgement import learned_judge

    if forget_reader is None:
        return learned_judge(heads, heads_sha256)
    return learned_judge(heads, heads_sha256, forget_reader=(forget_reader, None))


async def forget_lines(
    judge: SentenceJudge | None,
    case: Case,
    withheld: Mapping[int, frozenset[int]] | None = None,
) -> dict[int, list[int]] | None:
    """Per session, the subject lines holding a sentence judged a request to forget, as the
    product notices them (`said_requests`: each sentence of a line judged on its own; a whole
    line of several sentences reads as what most of it says). Lines in `withheld` (by session)
    were never recorded: the product never reads them."""
    if judge is None:
        return None
    found: dict[int, list[int]] = {}
    for n, session in enumerate(case.sessions):
        gone = (withheld or {}).get(n, frozenset())
        transcript = [
            Message(
                Role.SUBJECT if role == "subject" else Role.AGENT,
                text,
                session.at,
                forgotten=i in gone,
            )
            for i, (role, text) in enumerate(session.lines)
        ]
        requests = await said_requests(transcript, judge)
        found[n] = sorted({r.message_index for r in requests})
    return found


async def answer_labels(judge: SentenceJudge | None, answers: Sequence[Answer]) -> list[str]:
    """Without judgement a reply relayed as a confirmation is taken as given: a yes."""
    if judge is None:
        return ["yes"] * len(answers)
    replies = await judge.answers([(a.question, a.reply) for a in answers])
    return [str(r) for r in replies]
