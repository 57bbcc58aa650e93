"""The judge of the subject's answers in the API's runtime: the shipped heads by default, and
none (so no conversation confirms anything) when the configured heads cannot load."""

from __future__ import annotations

from pathlib import Path

from factledger.api.bootstrap.judgement import answer_judge
from factledger.api.settings.extraction import LearnedExtractorSettings, RuleExtractorSettings


def test_the_rule_extractor_still_gets_the_shipped_answer_judge() -> None:
    assert answer_judge(RuleExtractorSettings()) is not None


def test_heads_that_cannot_load_leave_no_judge(tmp_path: Path) -> None:
    missing = LearnedExtractorSettings(heads_path=tmp_path / "absent-heads.npz")
    assert answer_judge(missing) is None
    corrupt = tmp_path / "corrupt-heads.npz"
    corrupt.write_bytes(b"not heads")
    assert answer_judge(LearnedExtractorSettings(heads_path=corrupt, heads_sha256="0" * 64)) is None
