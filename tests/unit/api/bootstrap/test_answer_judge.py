"""The judge of the subject's answers in the API's runtime: the shipped heads and pair head by
default, and none (so no conversation confirms anything) when the configured heads cannot load."""

from __future__ import annotations

from pathlib import Path

from factledger.adapters.judgement.forget_reader import (
    PACKAGED_FORGET_READER,
    PACKAGED_FORGET_READER_GATE,
    PACKAGED_FORGET_READER_MIN,
    PACKAGED_FORGET_READER_SHA256,
    PACKAGED_MULTILINGUAL_READER_GATE,
    PACKAGED_MULTILINGUAL_READER_MIN,
    EitherReader,
    ForgetReader,
)
from factledger.adapters.judgement.judge import PACKAGED_HEADS, LearnedJudge
from factledger.adapters.judgement.pair_answers import (
    PACKAGED_ANSWER_HEAD,
    PACKAGED_ANSWER_HEAD_SHA256,
)
from factledger.api.bootstrap.judgement import answer_judge
from factledger.api.settings.extraction import (
    ExtractionSettings,
    LearnedExtractorSettings,
    RuleExtractorSettings,
)


def test_the_rule_extractor_still_gets_the_shipped_answer_judge() -> None:
    assert answer_judge(RuleExtractorSettings()) is not None


def test_heads_that_cannot_load_leave_no_judge(tmp_path: Path) -> None:
    missing = LearnedExtractorSettings(heads_path=tmp_path / "absent-heads.npz")
    assert answer_judge(missing) is None
    corrupt = tmp_path / "corrupt-heads.npz"
    corrupt.write_bytes(b"not heads")
    assert answer_judge(LearnedExtractorSettings(heads_path=corrupt, heads_sha256="0" * 64)) is None


def test_a_deployments_own_answer_head_is_used_only_when_it_matches_its_pin(
    tmp_path: Path,
) -> None:
    own = tmp_path / "answer-head.npz"
    own.write_bytes(PACKAGED_ANSWER_HEAD.read_bytes())
    pinned = ExtractionSettings(
        answer_head_path=own, answer_head_sha256=PACKAGED_ANSWER_HEAD_SHA256
    )
    judge = answer_judge(RuleExtractorSettings(), pinned)
    assert isinstance(judge, LearnedJudge)
    assert judge.pair_answers is not None
    wrong = ExtractionSettings(answer_head_path=own, answer_head_sha256="1" * 64)
    assert answer_judge(RuleExtractorSettings(), wrong) is None


def test_the_shipped_heads_read_with_the_shipped_forget_readers_unless_turned_off() -> None:
    shipped = answer_judge(LearnedExtractorSettings())
    assert isinstance(shipped, LearnedJudge)
    assert isinstance(shipped.forget_reader, EitherReader)  # English, then multilingual
    english, multilingual = shipped.forget_reader.readers
    assert isinstance(english, ForgetReader)
    assert isinstance(multilingual, ForgetReader)
    assert (english.gate, english.reader_min) == (
        PACKAGED_FORGET_READER_GATE,
        PACKAGED_FORGET_READER_MIN,
    )
    assert (multilingual.gate, multilingual.reader_min) == (
        PACKAGED_MULTILINGUAL_READER_GATE,
        PACKAGED_MULTILINGUAL_READER_MIN,
    )
    assert isinstance(answer_judge(RuleExtractorSettings()), LearnedJudge)
    off = answer_judge(LearnedExtractorSettings(forget_reader="none"))
    assert isinstance(off, LearnedJudge)
    assert off.forget_reader is None


def test_a_deployments_heads_read_with_their_own_forget_reader_or_none(tmp_path: Path) -> None:
    own = tmp_path / "heads.npz"
    own.write_bytes(PACKAGED_HEADS.read_bytes())
    alone = answer_judge(LearnedExtractorSettings(heads_path=own))
    assert isinstance(alone, LearnedJudge)
    assert alone.forget_reader is None  # the shipped reader's gate was fitted beside its flag
    reader = tmp_path / "reader.onnx"
    reader.write_bytes(PACKAGED_FORGET_READER.read_bytes())
    paired = answer_judge(
        LearnedExtractorSettings(
            heads_path=own,
            forget_reader_path=reader,
            forget_reader_sha256=PACKAGED_FORGET_READER_SHA256,
        )
    )
    assert isinstance(paired, LearnedJudge)
    assert isinstance(paired.forget_reader, ForgetReader)  # a deployment's replaces both
    assert (paired.forget_reader.reader_min, paired.forget_reader.gate) == (
        PACKAGED_FORGET_READER_MIN,
        PACKAGED_FORGET_READER_GATE,
    )
    unpinned = LearnedExtractorSettings(
        heads_path=own, forget_reader_path=reader, forget_reader_sha256="2" * 64
    )
    assert answer_judge(unpinned) is None
