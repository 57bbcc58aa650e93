"""The blind-set scorer counts requests to forget with the judge the run's product composes:
the heads file the run names, not the shipped one (ADR 0165 found it counting with the
shipped flag whatever `--heads` named)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import PACKAGED_HEADS, LearnedJudge
from factledger.bench.evalsets.judging import judge_for


def test_the_scorers_judge_reads_with_the_heads_file_the_run_names(tmp_path: Path) -> None:
    shipped = Heads.load(PACKAGED_HEADS, None)
    own = tmp_path / "heads.npz"
    replace(shipped, forget_min=0.99).save(own)

    named = judge_for("learned", own)
    default = judge_for("learned")

    assert isinstance(named, LearnedJudge)
    assert isinstance(default, LearnedJudge)
    assert named.heads.forget_min == 0.99
    assert default.heads.forget_min == shipped.forget_min
    assert judge_for("none", own) is None
