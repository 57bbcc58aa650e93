"""`factledger subjects erase` on the embedded default: the receipt is kept, the subject is
erased, its views are gone, and a second erasure is refused."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factledger.adapters.sqlite.session_buffer import SqliteSessionBuffer
from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.cli.main import app
from factledger.api.settings import load_settings
from factledger.application.sessions.types import ActiveSession, SessionId, SessionKey
from factledger.domain.transcript import Channel, Message, Role

SUBJECT = "acme/lead/lead-0042"
T0 = datetime(2026, 7, 1, 10, tzinfo=UTC)


def on_the_demo(runner: CliRunner, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's ledger in `data_dir`, and the commands pointed at it (the embedded default)."""
    assert runner.invoke(app, ["demo", "--data-dir", str(data_dir)]).exit_code == 0
    monkeypatch.setenv("FACTLEDGER_DATA_DIR", str(data_dir))
    monkeypatch.delenv("FACTLEDGER_EVENT_STORE__KIND", raising=False)


def test_the_cli_erases_a_subject_and_keeps_a_receipt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    on_the_demo(runner, tmp_path, monkeypatch)

    erased = runner.invoke(
        app, ["subjects", "erase", SUBJECT, "--reason", "ticket 4411", "--by", "ops-1"]
    )

    assert erased.exit_code == 0, erased.output
    assert "erased" in erased.output
    lines = [json.loads(line) for line in runner.invoke(app, ["replay"]).output.splitlines()]
    receipt = lines[-1]
    assert receipt["topic"] == "factledger.subject.erased.v1"
    # who, never why: the reason was sealed under the subject's key, which the erasure deleted
    assert (receipt["requested_by"], receipt["reason"]) == ({"kind": "staff", "id": "ops-1"}, None)
    assert "Supplier B" not in json.dumps(lines)
    history = runner.invoke(app, ["history", SUBJECT])
    assert history.exit_code == 1
    again = runner.invoke(app, ["subjects", "erase", SUBJECT, "--reason", "r", "--by", "ops-1"])
    assert again.exit_code == 1
    assert "SubjectErasedError" in again.output


def test_the_cli_erasure_removes_the_subjects_open_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    on_the_demo(runner, tmp_path, monkeypatch)
    with open_ledger_runtime(load_settings(), catch_up=False) as rt:
        subject_id = rt.ledger.subject_id_for(*SUBJECT.split("/"))
    key = SessionKey(subject_id, SessionId("wa-open"))
    canary = "canary-of-an-open-session"

    async def buffered() -> int | None:
        buffer = SqliteSessionBuffer(tmp_path / "short_term.sqlite")
        try:
            found = await buffer.get(key)
            return None if found is None else found.message_count
        finally:
            buffer.close()

    async def open_one() -> None:
        buffer = SqliteSessionBuffer(tmp_path / "short_term.sqlite")
        try:
            await buffer.open(ActiveSession(key.session_id, key.subject_id, Channel.CHAT, T0))
            await buffer.append(key, Message(Role.SUBJECT, canary, T0))
        finally:
            buffer.close()

    asyncio.run(open_one())
    assert asyncio.run(buffered()) == 1

    erased = runner.invoke(app, ["subjects", "erase", SUBJECT, "--reason", "r", "--by", "ops-1"])

    assert erased.exit_code == 0, erased.output
    assert asyncio.run(buffered()) is None
    for name in ("short_term.sqlite", "short_term.sqlite-wal"):
        if (tmp_path / name).exists():
            assert canary.encode() not in (tmp_path / name).read_bytes()


def test_erasing_needs_a_reason_and_an_operator(tmp_path: Path) -> None:
    refused = CliRunner().invoke(app, ["subjects", "erase", SUBJECT, "--by", "ops-1"])
    assert refused.exit_code == 2


def test_the_cli_records_a_memory_expiry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    on_the_demo(runner, tmp_path, monkeypatch)
    args = ["subjects", "expire-memory", SUBJECT, "mem-1", "--until", "2026-09-01T00:00:00+00:00"]

    first = runner.invoke(app, [*args, "--by", "ops-1"])
    again = runner.invoke(app, [*args, "--by", "ops-1"])

    assert first.exit_code == 0, first.output
    assert "recorded" in first.output
    assert "already" in again.output
    lines = [json.loads(line) for line in runner.invoke(app, ["replay"]).output.splitlines()]
    expiries = [line for line in lines if line["topic"].endswith("memory_expiry_set.v1")]
    assert [(e["memory_id"], e["valid_until"]) for e in expiries] == [
        ("mem-1", "2026-09-01T00:00:00+00:00")
    ]


def test_the_cli_expires_a_field_the_profile_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    on_the_demo(runner, tmp_path, monkeypatch)
    until = ["--until", "2026-09-01T00:00:00+00:00", "--by", "ops-1"]

    first = runner.invoke(
        app, ["subjects", "expire-field", SUBJECT, "supplier", *until, "--reason", "ticket 9"]
    )
    again = runner.invoke(app, ["subjects", "expire-field", SUBJECT, "supplier", *until])
    absent = runner.invoke(app, ["subjects", "expire-field", SUBJECT, "budget", *until])

    assert first.exit_code == 0, first.output
    assert "recorded" in first.output
    assert "already" in again.output
    assert absent.exit_code == 1
    assert "FieldNotHeldError" in absent.output
    lines = [json.loads(line) for line in runner.invoke(app, ["replay"]).output.splitlines()]
    expiries = [line for line in lines if line["topic"].endswith("field_expiry_set.v1")]
    assert [(e["field"], e["valid_until"], e["reason"]) for e in expiries] == [
        ("supplier", "2026-09-01T00:00:00+00:00", "ticket 9")
    ]
    monkeypatch.setenv("COLUMNS", "400")  # rich wraps cells to the terminal's width
    history = runner.invoke(app, ["history", SUBJECT])
    assert history.exit_code == 0, history.output
    assert "valid until 2026-09-01" in history.output
