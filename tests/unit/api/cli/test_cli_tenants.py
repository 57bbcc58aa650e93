"""A command that names a tenant (`--tenant`, or `tenant/kind/reference`) names one the
deployment serves (`FACTLEDGER_AUTH__TENANTS`, `__TENANT_PATTERN`): a typo is a usage error
(exit 2) before anything is opened or written, never a new tenant."""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

import pytest
from typer.testing import CliRunner

from factledger.api.cli.main import app

TYPO = "not a tenant of this deployment"


@pytest.fixture(autouse=True)
def _one_tenant(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FACTLEDGER_AUTH__KEYS", raising=False)
    monkeypatch.setenv("FACTLEDGER_AUTH__TENANTS", '["acme"]')
    monkeypatch.setenv("FACTLEDGER_DATA_DIR", str(tmp_path / "data"))


def refused(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 2, result.output
    assert TYPO in result.output
    return result.output


def test_minting_a_token_for_a_misspelt_tenant_is_refused() -> None:
    refused("token", "mint", "--role", "reviewer", "--tenant", "acmee")
    minted = CliRunner().invoke(app, ["token", "mint", "--role", "reviewer", "--tenant", "acme"])
    assert minted.exit_code == 0, minted.output


def test_importing_into_a_misspelt_tenant_writes_nothing(tmp_path: Path) -> None:
    lines = tmp_path / "history.ndjson"
    lines.write_text('{"type": "subject", "kind": "lead", "ref": "crm-1"}\n')
    refused("import", str(lines), "--tenant", "acmee", "--no-wait-sync")
    assert not (tmp_path / "data").exists()


def test_reading_or_erasing_a_subject_of_a_misspelt_tenant_is_refused() -> None:
    assert "SUBJECT" in refused("history", "acmee/lead/crm-1")
    assert "--tenant" in refused("history", str(uuid4()), "--tenant", "acmee")
    refused("subjects", "erase", "acmee/lead/crm-1", "--reason", "ticket 1", "--by", "ops-1")
