"""The console's settings: a short session secret is refused at start-up, by field name."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from factledger.api.settings import ConsoleSettings


def test_a_short_session_secret_is_refused() -> None:
    with pytest.raises(ValidationError, match="session_secret"):
        ConsoleSettings(session_secret=SecretStr("short"))


def test_sessions_are_short_lived_by_default() -> None:
    assert ConsoleSettings().session_ttl_s == 900


def test_previous_secrets_must_be_long_and_need_a_current_one() -> None:
    with pytest.raises(ValidationError, match="session_secret"):
        ConsoleSettings(session_secret=SecretStr("n" * 32), previous_session_secrets=("short",))
    with pytest.raises(ValidationError, match="need a session_secret"):
        ConsoleSettings(previous_session_secrets=(SecretStr("o" * 32),))
    rotated = ConsoleSettings(
        session_secret=SecretStr("n" * 32), previous_session_secrets=(SecretStr("o" * 32),)
    )
    assert len(rotated.previous_session_secrets) == 1
