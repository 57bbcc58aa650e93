"""`factledger console-link` prints a sign-in link whose fragment holds a console token."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from factledger.api.cli.main import app
from factledger.api.http.auth import Role, TokenVerifier
from factledger.api.settings import AuthSettings


@pytest.fixture(autouse=True)
def _default_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FACTLEDGER_AUTH__KEYS", "FACTLEDGER_API__HOST", "FACTLEDGER_API__PORT"):
        monkeypatch.delenv(name, raising=False)


def test_the_link_signs_in_a_reviewer_of_the_tenant() -> None:
    result = CliRunner().invoke(app, ["console-link", "--tenant", "acme"])
    assert result.exit_code == 0
    link = result.output.strip()
    assert link.startswith("http://127.0.0.1:8000/console/sign-in#token=")
    principal = TokenVerifier(AuthSettings()).verify(link.split("#token=", 1)[1])
    assert (principal.tenant, principal.role) == ("acme", Role.REVIEWER)


@pytest.mark.parametrize("role", ["agent", "service"])
def test_no_link_for_agents_or_services(role: str) -> None:
    result = CliRunner().invoke(app, ["console-link", "--tenant", "acme", "--role", role])
    assert result.exit_code != 0
