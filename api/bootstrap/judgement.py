"""The sentence judgement (`SentenceJudge`): the shipped heads, or a deployment's own.

One judge per heads file and process: the extractor of the proposer and that of a
self-hosted backend share it, so the embedder model behind it loads once.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from factledger.adapters.judgement.judge import LearnedJudge
from factledger.application.ports import SentenceJudge


@cache
def learned_judge(heads_path: Path | None = None, heads_sha256: str | None = None) -> SentenceJudge:
    if heads_path is None:
        return LearnedJudge.packaged()
    return LearnedJudge.from_file(heads_path, heads_sha256)
