"""Every store is chosen the same way (memory, a SQLite file, a PostgreSQL schema), under the
environment variables and with the defaults the README documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from factledger.api.settings import Settings, load_settings

# The store's place in `Settings`: (environment prefix, default kind, default schema)
STORES = {
    "event_store": ("FACTLEDGER_EVENT_STORE__", "sqlite", "public"),
    "views": ("FACTLEDGER_VIEWS__", "sqlite", "factledger_views"),
    "short_term": ("FACTLEDGER_SHORT_TERM__", "sqlite", "factledger_short_term"),
    "sync.store": ("FACTLEDGER_SYNC__STORE__", "memory", "factledger_sync"),
}
SQLITE_STORES = ["event_store", "views", "short_term"]


def store(settings: Settings, where: str) -> Any:
    for part in where.split("."):
        settings = getattr(settings, part)
    return settings


@pytest.fixture(autouse=True)
def _no_inherited_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for prefix, _, _ in STORES.values():
        for key in ("KIND", "PATH", "SCHEMA_NAME"):
            monkeypatch.delenv(prefix + key, raising=False)


@pytest.mark.parametrize("where", STORES)
def test_each_store_has_its_documented_default_kind(where: str) -> None:
    assert store(load_settings(), where).kind == STORES[where][1]


@pytest.mark.parametrize("where", STORES)
def test_a_postgres_store_has_its_own_default_schema(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix, _, schema = STORES[where]
    monkeypatch.setenv(prefix + "KIND", "postgres")
    assert store(load_settings(), where).schema_name == schema


@pytest.mark.parametrize("where", STORES)
def test_a_postgres_schema_is_set_through_the_environment(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix, _, _ = STORES[where]
    monkeypatch.setenv(prefix + "KIND", "postgres")
    monkeypatch.setenv(prefix + "SCHEMA_NAME", "tenant_a")
    assert store(load_settings(), where).schema_name == "tenant_a"


@pytest.mark.parametrize("where", SQLITE_STORES)
def test_a_sqlite_path_is_set_through_the_environment_and_defaults_to_the_data_dir(
    where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix, _, _ = STORES[where]
    monkeypatch.setenv(prefix + "KIND", "sqlite")
    assert store(load_settings(), where).path is None  # bootstrap puts it under the data dir
    monkeypatch.setenv(prefix + "PATH", "stores/chosen.sqlite")
    assert store(load_settings(), where).path == Path("stores/chosen.sqlite")


@pytest.mark.parametrize("where", STORES)
def test_an_in_process_store_takes_no_location(where: str) -> None:
    overrides: dict[str, object] = {"kind": "memory"}
    top, _, nested = where.partition(".")
    settings = load_settings(**{top: {nested: overrides} if nested else overrides})
    assert store(settings, where).kind == "memory"
