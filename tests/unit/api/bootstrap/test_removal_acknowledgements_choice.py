"""Whether the judge reads the agent's acknowledgements of removals (ADR 0206), as
`FACTLEDGER_EXTRACTOR__REMOVAL_ACKNOWLEDGEMENTS` chooses: off by default; on, the shipped
reader; a shipped file that cannot be used is logged and the judge reads requests as before,
never a start that fails for it."""

from __future__ import annotations

import pytest
import structlog

from factledger.adapters.judgement import acknowledgements
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.api.bootstrap import judgement
from factledger.api.bootstrap.judgement import answer_judge
from factledger.api.settings import Settings
from factledger.api.settings.extraction import LearnedExtractorSettings

LINE = "Certainly, your salary figure has been deleted from your profile and won't be shared."


def _judge(on: bool) -> LearnedJudge:
    judge = answer_judge(LearnedExtractorSettings(removal_acknowledgements=on))
    assert isinstance(judge, LearnedJudge)
    return judge


async def test_off_by_default_and_the_shipped_reader_when_on() -> None:
    assert LearnedExtractorSettings().removal_acknowledgements is False
    assert _judge(False).acknowledgements is None
    assert await _judge(False).acknowledged_removals([LINE]) == [0.0]
    assert _judge(True).acknowledgements is not None
    assert (await _judge(True).acknowledged_removals([LINE]))[0] > 0.0


def test_a_shipped_file_that_cannot_be_used_is_logged_and_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(acknowledgements, "PACKAGED_REMOVAL_ACK_READER_SHA256", "0" * 64)
    judgement._learned_judge.cache_clear()
    try:
        with structlog.testing.capture_logs() as logs:
            assert _judge(True).acknowledgements is None
    finally:
        judgement._learned_judge.cache_clear()
    assert any(e["event"] == "removal_acknowledgements_unavailable" for e in logs)


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR__KIND", "learned")
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR__REMOVAL_ACKNOWLEDGEMENTS", "true")
    extractor = Settings().extractor
    assert isinstance(extractor, LearnedExtractorSettings)
    assert extractor.removal_acknowledgements is True
