"""Settings choose the stores; the runtime opens them, and the CLI drives the whole thing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.cli.main import app
from factledger.api.settings import (
    InMemoryEventStoreSettings,
    InMemoryViewSettings,
    PostgresEventStoreSettings,
    PostgresViewSettings,
    SettingsError,
    SqliteEventStoreSettings,
    SqliteViewSettings,
    load_settings,
)
from factledger.application.ledger.commands import RegisterSubject
from factledger.domain.values import ValueType
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import JAN, TENANT


def test_the_embedded_default_is_sqlite_in_the_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FACTLEDGER_EVENT_STORE__KIND", "FACTLEDGER_VIEWS__KIND", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert isinstance(settings.event_store, SqliteEventStoreSettings)
    assert isinstance(settings.views, SqliteViewSettings)
    assert settings.ledger_path() == Path(".factledger/ledger.sqlite")


def test_the_environment_switches_adapters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_EVENT_STORE__KIND", "postgres")
    monkeypatch.setenv("FACTLEDGER_EVENT_STORE__SCHEMA_NAME", "ledger_x")
    monkeypatch.setenv("FACTLEDGER_VIEWS__KIND", "memory")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:hunter2@db:5432/app")
    settings = load_settings()
    assert settings.event_store == PostgresEventStoreSettings(schema_name="ledger_x")
    assert isinstance(settings.views, InMemoryViewSettings)
    assert settings.database_url is not None
    assert "hunter2" not in repr(settings)


def test_profile_schemas_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FACTLEDGER_PROFILE_SCHEMAS", '{"lead": {"budget": "money"}}')
    settings = load_settings(data_dir=tmp_path, event_store=InMemoryEventStoreSettings())
    with open_ledger_runtime(settings) as rt:
        assert rt.ledger.schemas["lead"].fields == {"budget": ValueType.MONEY}


def test_bad_settings_are_named_by_field_without_their_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_EVENT_STORE__KIND", "cassandra-secret-value")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "event_store" in str(caught.value)
    assert "cassandra-secret-value" not in str(caught.value)


def test_sqlite_views_survive_a_restart_and_resume_from_their_position(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path)
    with open_ledger_runtime(settings) as rt:
        rt.ledger.register_subject(RegisterSubject("acme", "lead", "a"))
        rt.catch_up()
        position = rt.views.position()
    with open_ledger_runtime(settings, catch_up=False) as rt:
        assert rt.views.position() == position
        rt.ledger.register_subject(RegisterSubject("acme", "lead", "b"))
        rt.catch_up()
        assert rt.views.position() == position + 1  # resumed: only the new event applied
        assert [s.external_ref for s in rt.profiles.subjects("acme")] == ["a", "b"]


def test_in_memory_views_are_rebuilt_at_start(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path, views=InMemoryViewSettings())
    with open_ledger_runtime(settings) as rt:
        rt.ledger.register_subject(RegisterSubject("acme", "lead", "a"))
    with open_ledger_runtime(settings) as rt:
        assert [s.external_ref for s in rt.profiles.subjects("acme")] == ["a"]


@pytest.mark.integration
def test_postgres_holds_both_events_and_views(postgres: PostgresLocation, tmp_path: Path) -> None:
    url = f"postgresql://{postgres.user}:@:{postgres.port}/{postgres.dbname}?host={postgres.host}"
    settings = load_settings(
        data_dir=tmp_path,
        database_url=url,
        event_store=PostgresEventStoreSettings(schema_name="boot_events"),
        views=PostgresViewSettings(schema_name="boot_views"),
    )
    clock = ManualClock(JAN)
    with open_ledger_runtime(settings, clock=clock) as rt:
        ids = run_story(rt.ledger, clock)
        rt.catch_up()
        live = rt.projection.dump()
        assert rt.profiles.current(TENANT, ids.subject_id).version == 5
    with open_ledger_runtime(settings) as rt:
        assert rt.projection.dump() == live


def test_the_cli_runs_the_demo_then_history_replay_and_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # wide tables: no wrapped cells to search through
    runner = CliRunner()
    demo = runner.invoke(app, ["demo", "--data-dir", str(tmp_path)])
    assert demo.exit_code == 0, demo.output
    assert "Supplier B" in demo.output
    assert "if the pricing works" in demo.output

    monkeypatch.setenv("FACTLEDGER_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("FACTLEDGER_EVENT_STORE__KIND", raising=False)
    as_of = runner.invoke(app, ["history", "acme/lead/lead-0042", "--as-of", "2026-02-01"])
    assert as_of.exit_code == 0, as_of.output
    assert "Supplier A" in as_of.output
    assert "version 1" in as_of.output
    known = runner.invoke(
        app, ["history", "acme/lead/lead-0042", "--as-of", "2026-02-01", "--clock", "known"]
    )
    assert known.exit_code == 0, known.output
    assert "known clock" in known.output
    assert "Supplier A" in known.output
    since = runner.invoke(app, ["history", "acme/lead/lead-0042", "--diff-from", "2026-02-01"])
    assert since.exit_code == 0, since.output
    assert "Changed since 2026-02-01 (said clock)" in since.output
    bad_clock = runner.invoke(app, ["history", "acme/lead/lead-0042", "--clock", "wall"])
    assert bad_clock.exit_code == 2
    assert "--clock" in bad_clock.output

    unknown = runner.invoke(app, ["history", "acme/lead/nobody"])
    assert unknown.exit_code == 1
    assert "not found" in unknown.output

    replay = runner.invoke(app, ["replay"])
    lines = [json.loads(line) for line in replay.output.splitlines()]
    assert [line["position"] for line in lines] == sorted(line["position"] for line in lines)
    assert lines[0]["topic"] == "factledger.subject.registered.v1"
    assert lines[0]["timestamp"] == "2026-01-12T10:00:00+00:00"
    assert sum(line["topic"].endswith("change_rejected.v1") for line in lines) == 1

    rebuilt = runner.invoke(app, ["projections", "rebuild"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert f"from {len(lines)} events" in rebuilt.output
    assert isinstance(InMemoryEventStoreSettings(), InMemoryEventStoreSettings)
