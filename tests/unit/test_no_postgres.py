"""The guard of tests/unit/conftest.py: a unit test cannot reach PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.adapters.postgres_server import EmbeddedPostgres


def test_asking_for_the_postgres_fixture_fails_the_test(request: pytest.FixtureRequest) -> None:
    with pytest.raises(pytest.fail.Exception, match="tests/unit runs without PostgreSQL"):
        request.getfixturevalue("postgres")


def test_starting_the_embedded_server_fails_the_test(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="tests/unit runs without PostgreSQL"):
        EmbeddedPostgres(tmp_path / "pg", delete_on_stop=True)
    assert not (tmp_path / "pg").exists()
