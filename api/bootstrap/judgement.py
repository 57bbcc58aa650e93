"""The sentence judgement (`SentenceJudge`): the shipped heads, or a deployment's own.

One judge per heads file and process: the extractor of the proposer and that of a
self-hosted backend share it, so the embedder model behind it loads once.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import structlog

from factledger.adapters.embedding.onnx.model_files import default_cache_dir
from factledger.adapters.judgement.heads import HeadsIntegrityError
from factledger.adapters.judgement.instructions import LearnedInstructionDetector
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.tentative import LearnedTentativeReader
from factledger.api.settings.extraction import ExtractorSettings, LearnedExtractorSettings
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.sessions.instruction_screen import InstructionScreen
from factledger.application.sessions.ports import SafetyFilter
from factledger.domain.hedges import TentativeReader

log = structlog.get_logger(__name__)


@cache
def learned_judge(heads_path: Path | None = None, heads_sha256: str | None = None) -> SentenceJudge:
    # The embedder's graph from the user's graph cache, where the backend's embedder of the
    # same model keeps it too: compiling it again took about a third of a start's CPU.
    cache_dir = default_cache_dir()
    if heads_path is None:
        return LearnedJudge.packaged(cache_dir=cache_dir)
    return LearnedJudge.from_file(heads_path, heads_sha256, cache_dir=cache_dir)


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


def tentative_reader(judge: SentenceJudge | None) -> TentativeReader | None:
    """The ledger's reader of tentative sentences over the judge's hedge head; None (the
    hedge rule unchecked, logged) when there is no packaged judge to read with."""
    if isinstance(judge, LearnedJudge):
        try:
            return LearnedTentativeReader(judge)
        except TypeError:
            pass
    log.error("hedge_check_unavailable")
    return None


def screened_safety(inner: SafetyFilter, judge: SentenceJudge | None) -> SafetyFilter:
    """`inner`, then the shipped instruction head (over the judge's embedder when it is the
    packaged one, so the model loads once). A head that cannot load is logged and the check
    skipped: what gets through is still fenced as the subject's words in every prompt."""
    embedder = judge.embedder if isinstance(judge, LearnedJudge) else None
    try:
        try:
            detector = LearnedInstructionDetector.packaged(embedder)
        except ValueError:  # the judge's embedder is another model: the head's own
            detector = LearnedInstructionDetector.packaged()
    except (HeadsIntegrityError, OSError, ValueError) as exc:
        log.error("instruction_check_unavailable", error_type=type(exc).__name__)
        return inner
    return InstructionScreen(inner, detector)
