"""Whether the judge reads the removals the agent confirms (ADR 0209), as
`FACTLEDGER_EXTRACTOR__REMOVAL_CONFIRMATIONS` chooses: off by default; on, the shipped reader;
a shipped file that cannot be used is logged and the judge reads requests as before, never a
start that fails for it."""

from __future__ import annotations

import pytest
import structlog

from factledger.adapters.judgement import confirmations
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.api.bootstrap import judgement
from factledger.api.bootstrap.judgement import answer_judge
from factledger.api.settings import Settings
from factledger.api.settings.extraction import LearnedExtractorSettings

PAIR = (
    "Also please take my salary figure off your notes, I'd rather not have it on file.",
    "Certainly, your salary figure has been deleted and won't be shared.",
)


def _judge(on: bool) -> LearnedJudge:
    judge = answer_judge(LearnedExtractorSettings(removal_confirmations=on))
    assert isinstance(judge, LearnedJudge)
    return judge


async def test_off_by_default_and_the_shipped_reader_when_on() -> None:
    assert LearnedExtractorSettings().removal_confirmations is False
    assert _judge(False).confirmations is None
    assert await _judge(False).confirmed_removals([PAIR]) == [0.0]
    assert _judge(True).confirmations is not None
    assert (await _judge(True).confirmed_removals([PAIR]))[0] > 0.0


def test_a_shipped_file_that_cannot_be_used_is_logged_and_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(confirmations, "PACKAGED_REMOVAL_CONFIRMATIONS_SHA256", "0" * 64)
    judgement._learned_judge.cache_clear()
    try:
        with structlog.testing.capture_logs() as logs:
            assert _judge(True).confirmations is None
    finally:
        judgement._learned_judge.cache_clear()
    assert any(e["event"] == "removal_confirmations_unavailable" for e in logs)


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR__KIND", "learned")
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR__REMOVAL_CONFIRMATIONS", "true")
    extractor = Settings().extractor
    assert isinstance(extractor, LearnedExtractorSettings)
    assert extractor.removal_confirmations is True
