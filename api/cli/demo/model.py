"""The demo's model: the product's configured proposer (the default extractor, the kind's
feeds, the answer judge noticing requests to forget), reviewing each story session as the
sync worker would, so that `factledger demo` shows what the default proposes."""

from __future__ import annotations

from contextlib import AsyncExitStack
from uuid import UUID

from factledger.api.bootstrap.judgement import answer_judge
from factledger.api.bootstrap.proposals import model_actor
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.bootstrap.services import open_proposer
from factledger.api.settings import Settings
from factledger.domain.events import SessionRecorded
from factledger.testing.story.script import TENANT
from factledger.testing.story.steps import StoryModel


async def configured_model(settings: Settings, rt: Runtime, stack: AsyncExitStack) -> StoryModel:
    judge = answer_judge(settings.extractor, settings.extraction)
    proposer = await open_proposer(settings, rt.ledger, stack, judge)

    async def review(subject_id: UUID, session_id: str) -> None:
        recorded = [
            e
            for e in rt.ledger.events.get(subject_id)
            if isinstance(e, SessionRecorded) and e.session_id == session_id
        ]
        await proposer.review(TENANT, recorded[-1])

    return StoryModel(review, model_actor(settings))
