"""`factledger token mint`: tokens the configured keys verify, and refusals named plainly."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from factledger.api.cli.main import app
from factledger.api.http.auth import Role, TokenVerifier
from factledger.api.settings import load_settings


@pytest.fixture(autouse=True)
def no_env_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACTLEDGER_AUTH__KEYS", raising=False)
    monkeypatch.delenv("FACTLEDGER_AUTH__ENVIRONMENT", raising=False)


def test_a_minted_agent_token_verifies_with_the_configured_keys() -> None:
    result = CliRunner().invoke(
        app, ["token", "mint", "--role", "agent", "--tenant", "acme", "--subject", "lead:crm-17"]
    )
    assert result.exit_code == 0, result.output
    principal = TokenVerifier(load_settings().auth).verify(result.output.strip())
    assert (principal.tenant, principal.role) == ("acme", Role.AGENT)
    assert principal.subject is not None
    assert (principal.subject.kind, principal.subject.ref) == ("lead", "crm-17")


def test_agent_tokens_need_a_subject_and_others_refuse_one() -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["token", "mint", "--role", "agent", "--tenant", "acme"])
    assert missing.exit_code != 0
    extra = runner.invoke(
        app, ["token", "mint", "--role", "reviewer", "--tenant", "acme", "--subject", "lead:x"]
    )
    assert extra.exit_code != 0
    reviewer = runner.invoke(app, ["token", "mint", "--role", "reviewer", "--tenant", "acme"])
    assert reviewer.exit_code == 0
    assert TokenVerifier(load_settings().auth).verify(reviewer.output.strip()).subject is None


def test_serve_refuses_several_workers_without_shared_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("FACTLEDGER_BACKEND__KIND", raising=False)
    monkeypatch.delenv("FACTLEDGER_SYNC__STORE__KIND", raising=False)
    result = CliRunner().invoke(app, ["serve", "--workers", "2"])
    assert result.exit_code != 0
    assert "shared state" in result.output


def test_serve_refuses_several_workers_without_one_console_session_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_BACKEND__KIND", "pgvector")
    monkeypatch.setenv("FACTLEDGER_SYNC__STORE__KIND", "postgres")
    monkeypatch.delenv("FACTLEDGER_CONSOLE__SESSION_SECRET", raising=False)
    monkeypatch.delenv("FACTLEDGER_CONSOLE__ENABLED", raising=False)
    result = CliRunner().invoke(app, ["serve", "--workers", "2"])
    assert result.exit_code != 0
    assert "SESSION_SECRET" in result.output
