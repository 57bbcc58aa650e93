"""The sentence judgement (`SentenceJudge`): the shipped heads, or a deployment's own.

One judge per heads file and process: the extractor of the proposer and that of a
self-hosted backend share it, so the embedder model behind it loads once.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import structlog

from factledger.adapters.judgement.heads import HeadsIntegrityError
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.api.settings.extraction import ExtractorSettings, LearnedExtractorSettings
from factledger.application.judgement.ports import SentenceJudge

log = structlog.get_logger(__name__)


@cache
def learned_judge(heads_path: Path | None = None, heads_sha256: str | None = None) -> SentenceJudge:
    if heads_path is None:
        return LearnedJudge.packaged()
    return LearnedJudge.from_file(heads_path, heads_sha256)


def answer_judge(settings: ExtractorSettings) -> SentenceJudge | None:
    """The judge of the subject's answers (the learned extractor's heads when it is chosen,
    else the shipped ones), or None when they cannot load: then no conversation confirms
    anything (a change stays pending until a reviewer decides)."""
    try:
        if isinstance(settings, LearnedExtractorSettings) and settings.heads_path is not None:
            return learned_judge(settings.heads_path, settings.heads_sha256)
        return learned_judge()
    except (HeadsIntegrityError, OSError, ValueError) as exc:
        log.error("sentence_judgement_unavailable", error_type=type(exc).__name__)
        return None
