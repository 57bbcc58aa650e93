"""`factledger console-link` prints a sign-in link whose fragment holds a console token, to
the server `factledger serve` runs (the same `--host` / `--port` and settings), or to the
public URL a proxy serves it at."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from factledger.api.cli.main import app
from factledger.api.http.auth import Role, TokenVerifier
from factledger.api.settings import AuthSettings


@pytest.fixture(autouse=True)
def _default_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "FACTLEDGER_AUTH__KEYS",
        "FACTLEDGER_AUTH__TENANTS",
        "FACTLEDGER_API__HOST",
        "FACTLEDGER_API__PORT",
        "FACTLEDGER_API__PUBLIC_URL",
    ):
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


def link(*args: str) -> str:
    result = CliRunner().invoke(app, ["console-link", "--tenant", "acme", *args])
    assert result.exit_code == 0, result.output
    return result.output.strip().split("#token=", 1)[0]


def test_the_link_goes_where_serve_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    assert link("--port", "8123") == "http://127.0.0.1:8123/console/sign-in"
    # Where serve listens on every interface, the browser goes to the loopback one.
    everywhere = "0.0.0.0"  # noqa: S104 - the address serve is given, not one bound here
    assert link("--host", everywhere, "--port", "9000") == "http://127.0.0.1:9000/console/sign-in"
    assert link("--host", "::1") == "http://[::1]:8000/console/sign-in"
    monkeypatch.setenv("FACTLEDGER_API__PORT", "8555")
    assert link() == "http://127.0.0.1:8555/console/sign-in"


def test_the_link_goes_to_the_public_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_API__PUBLIC_URL", "https://memory.example.test/")
    assert link() == "https://memory.example.test/console/sign-in"
    assert link("--port", "8123") == "http://127.0.0.1:8123/console/sign-in"
    assert link("--base-url", "https://x.example.test") == "https://x.example.test/console/sign-in"
    both = CliRunner().invoke(
        app, ["console-link", "--tenant", "acme", "--base-url", "https://x", "--port", "1"]
    )
    assert both.exit_code == 2


def test_a_tenant_the_deployment_does_not_serve_gets_no_link(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_AUTH__TENANTS", '["acme"]')
    assert link().endswith("/console/sign-in")
    typo = CliRunner().invoke(app, ["console-link", "--tenant", "acmee"])
    assert typo.exit_code == 2
    assert "not a tenant of this deployment" in typo.output
    assert "--tenant" in typo.output
