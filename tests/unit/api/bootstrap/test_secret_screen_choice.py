"""Which secret head screens a message (ADR 0185), as `FACTLEDGER_SAFETY__*` chooses: the
shipped one by default; none when turned off (the detectors alone); a deployment's own file,
with its pin, which stops the start when it does not match; a shipped file that cannot be used
is logged and its check skipped, never a start that fails for it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import structlog

from factledger.adapters.judgement import secrets
from factledger.adapters.judgement.heads import HeadsIntegrityError
from factledger.adapters.judgement.secrets import (
    PACKAGED_SECRET_HEAD,
    PACKAGED_SECRET_HEAD_SHA256,
)
from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.api.bootstrap.judgement import screened_messages
from factledger.api.settings import Settings
from factledger.api.settings.safety import SafetySettings
from factledger.domain.transcript import Message, Role

GATE_CODE = Message(Role.SUBJECT, "Der Code für das Gartentor ist 7731, falls niemand aufmacht.")


async def refused(settings: SafetySettings) -> bool:
    screen = screened_messages(DetectorSafetyFilter(), None, settings)
    return not (await screen.screen(GATE_CODE)).allowed


async def test_the_shipped_head_screens_by_default_and_none_when_turned_off() -> None:
    assert await refused(SafetySettings())
    assert not await refused(SafetySettings(secret_head=False))


async def test_a_deployments_own_head_is_read_with_its_pin(tmp_path: Path) -> None:
    own = tmp_path / "our-secret-head.npz"
    shutil.copy(PACKAGED_SECRET_HEAD, own)
    pinned = SafetySettings(secret_head_path=own, secret_head_sha256=PACKAGED_SECRET_HEAD_SHA256)
    assert await refused(pinned)
    with pytest.raises(HeadsIntegrityError):
        screened_messages(
            DetectorSafetyFilter(), None, pinned.model_copy(update={"secret_head_sha256": "0" * 64})
        )


async def test_a_shipped_head_that_cannot_be_used_is_logged_and_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(secrets, "PACKAGED_SECRET_HEAD_SHA256", "0" * 64)
    with structlog.testing.capture_logs() as logs:
        assert not await refused(SafetySettings())
    assert {"event": "secret_check_unavailable", "error_type": "HeadsIntegrityError"}.items() <= (
        next(e for e in logs if e["event"] == "secret_check_unavailable").items()
    )


def test_the_settings_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_SAFETY__SECRET_HEAD", "false")
    assert Settings().safety.secret_head is False
    monkeypatch.setenv("FACTLEDGER_SAFETY__SECRET_HEAD_SHA256", "not-a-sha")
    with pytest.raises(ValueError, match="secret_head_sha256"):
        Settings()
