"""The sentence judgement the blind runs use for forget requests and confirmation replies."""

from __future__ import annotations

from collections.abc import Sequence

from factledger.application.judgement.ports import SentenceJudge
from factledger.bench.evalsets.cases import Answer, Case


def judge_for(name: str) -> SentenceJudge | None:
    """`none`: the product as it was, with no judgement; `learned`: the shipped heads."""
    if name == "none":
        return None
    from factledger.adapters.judgement.judge import LearnedJudge

    return LearnedJudge.packaged()


async def forget_lines(judge: SentenceJudge | None, case: Case) -> dict[int, list[int]] | None:
    """Per session, the subject lines judged a request to forget."""
    if judge is None:
        return None
    found: dict[int, list[int]] = {}
    for n, session in enumerate(case.sessions):
        said = [(i, text) for i, (role, text) in enumerate(session.lines) if role == "subject"]
        judged = await judge.judge([text for _, text in said])
        found[n] = [i for (i, _), j in zip(said, judged, strict=True) if j.forget_request]
    return found


async def answer_labels(judge: SentenceJudge | None, answers: Sequence[Answer]) -> list[str]:
    """Without judgement a reply relayed as a confirmation is taken as given: a yes."""
    if judge is None:
        return ["yes"] * len(answers)
    replies = await judge.answers([(a.question, a.reply) for a in answers])
    return [str(r) for r in replies]
