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
