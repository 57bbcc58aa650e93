"""The unit tier runs without PostgreSQL: a test that asks for the server fails here.

Tests that need PostgreSQL belong in tests/integration, or in tests/contracts (marked
`integration`) when they check a port's contract.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

import pytest

from factledger.adapters.postgres_server import EmbeddedPostgres

NO_POSTGRES = (
    "tests/unit runs without PostgreSQL: move this test to tests/integration "
    "(or tests/contracts, marked integration, if it checks a port's contract)"
)


@pytest.fixture(scope="session")
def postgres() -> NoReturn:
    """Replaces the session's embedded server (tests/conftest.py) for every unit test,
    including those that ask for it at run time (`request.getfixturevalue`)."""
    pytest.fail(NO_POSTGRES)


@pytest.fixture(autouse=True)
def _no_embedded_server() -> Iterator[None]:
    """Catches a unit test that starts the embedded server itself.

    Per test, not per session: a session-scoped patch outlived the unit tests and refused
    the server to e2e tests run in the same pytest session (`pytest tests/unit tests/e2e`).
    """

    def refuse(*_args: object, **_kwargs: object) -> NoReturn:
        pytest.fail(NO_POSTGRES)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(EmbeddedPostgres, "__init__", refuse)
        yield


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("integration") is not None:
        pytest.fail(f"{item.nodeid} is marked integration. {NO_POSTGRES}")
