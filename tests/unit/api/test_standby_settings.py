"""A standby that serves reads is configured beside its primary, never alone."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import Settings

PRIMARY = "postgresql://app:pw@db-a:5432,db-b:5432/ledger?target_session_attrs=read-write"
STANDBY = "postgresql://app:pw@db-b:5432/ledger"


def test_the_read_url_names_the_standby_reads_go_to() -> None:
    settings = Settings(database_url=SecretStr(PRIMARY), database_read_url=SecretStr(STANDBY))
    server = PostgresServer(settings)
    standby = server.read_location()
    assert standby is not None
    assert (standby.host, standby.port) == ("db-b", 5432)
    assert server.location().target_session_attrs == "read-write"


def test_no_read_url_means_every_read_on_the_primary() -> None:
    assert PostgresServer(Settings(database_url=SecretStr(PRIMARY))).read_location() is None


def test_a_standby_without_its_primary_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_DATABASE_READ_URL", STANDBY)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("FACTLEDGER_DATABASE_URL", raising=False)
    with pytest.raises(ValidationError, match="database_read_url"):
        Settings()
