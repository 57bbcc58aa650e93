"""Converters: a mem0 export (memories and their history) and LoCoMo-shaped conversations
become import lines that import cleanly, in time order, with the times they carry."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factledger.api.cli.main import app
from factledger.application.importing.converters import ConversionError, from_locomo, from_mem0
from factledger.application.importing.format import SessionLine, SubjectLine, parse_line, to_line
from factledger.domain.transcript import Role

from .conftest import TENANT, Importer

MEM0_EXPORT = Path(__file__).parents[3] / "data" / "mem0_export.json"
# LoCoMo's licence forbids shipping it: read it where the caller keeps it, or skip.
LOCOMO = Path(os.environ.get("FACTLEDGER_LOCOMO", "../shared/datasets/locomo/locomo10.json"))


def read_json(path: Path) -> object:
    return json.loads(path.read_text())


def lines_of(records: list[SubjectLine | SessionLine]) -> bytes:
    return "".join(f"{to_line(r)}\n" for r in records).encode()


def test_a_mem0_export_becomes_a_subject_per_user_and_a_session_per_day() -> None:
    records = list(from_mem0(read_json(MEM0_EXPORT), kind="lead"))
    subjects = [r.ref for r in records if isinstance(r, SubjectLine)]
    assert subjects == ["customer-17", "lead-0042"]  # whitespace is no reference character
    sessions = {(r.subject.ref, r.session_id): r for r in records if isinstance(r, SessionLine)}
    assert sorted(sessions) == [
        ("customer-17", "mem0-2025-02-01"),
        ("lead-0042", "mem0-2025-01-14"),
        ("lead-0042", "mem0-2025-03-12"),
        ("lead-0042", "mem0-2025-04-02"),
    ]
    january = sessions[("lead-0042", "mem0-2025-01-14")]
    assert [m.text for m in january.messages] == [
        "mem0 memory added: Works with Supplier A",
        "mem0 memory added: Prefers WhatsApp over email",
    ]
    assert {m.role for s in sessions.values() for m in s.messages} == {Role.SYSTEM}
    march = sessions[("lead-0042", "mem0-2025-03-12")]
    assert [m.text for m in march.messages] == [
        "mem0 memory updated: Works with Supplier B (was: Works with Supplier A)"
    ]  # the NONE event says nothing
    assert march.started_at.isoformat() == "2025-03-12T10:15:00-08:00"
    april = sessions[("lead-0042", "mem0-2025-04-02")]
    assert [m.text for m in april.messages] == ["mem0 memory deleted: Prefers WhatsApp over email"]


async def test_a_converted_mem0_export_imports_cleanly_and_only_once(importer: Importer) -> None:
    data = lines_of(list(from_mem0(read_json(MEM0_EXPORT), kind="lead")))
    report = await importer.run(data)
    assert report.error_count == 0
    assert (report.subjects, report.sessions, report.messages) == (2, 4, 5)
    again = await importer.run(data, import_id="again")
    assert (again.sessions, again.unchanged) == (0, 4)
    subject = importer.ledger.subject(
        TENANT, importer.ledger.subject_id_for(TENANT, "lead", "lead-0042")
    )
    assert len(subject.sessions) == 3


def test_a_memory_without_history_is_its_own_addition() -> None:
    export = [{"id": "m1", "memory": "Likes tea", "user_id": "u1", "created_at": "2025-05-01"}]
    [_, session] = list(from_mem0(export))
    assert isinstance(session, SessionLine)
    assert [m.text for m in session.messages] == ["mem0 memory added: Likes tea"]
    assert session.started_at.isoformat() == "2025-05-01T00:00:00+00:00"  # naive: read as UTC


@pytest.mark.parametrize(
    ("export", "path"),
    [
        ({"results": "nope"}, "$.results"),
        ([{"id": "m1", "memory": "x"}], "$.results[0].user_id"),
        ([{"id": "m1", "memory": "x", "user_id": "u", "created_at": "soon"}], "created_at"),
    ],
)
def test_an_unreadable_mem0_export_names_the_path(export: object, path: str) -> None:
    with pytest.raises(ConversionError) as caught:
        list(from_mem0(export))
    assert path in caught.value.field


CONVERSATION = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ada Example",
            "speaker_b": "Bo",
            "session_2_date_time": "9:05 am on 2 June, 2023",
            "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "And now?"}],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ada Example", "dia_id": "D1:1", "text": "We moved to Supplier B."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Why?", "img_url": ["x"]},
            ],
        },
        "session_summary": {"session_1_summary": "Ada talked about suppliers."},
    }
]


def test_a_locomo_conversation_has_speaker_a_as_subject_sessions_in_date_order() -> None:
    records = list(from_locomo(CONVERSATION))
    assert records[0] == SubjectLine(type="subject", kind="person", ref="conv-1:Ada-Example")
    sessions = [r for r in records if isinstance(r, SessionLine)]
    assert [s.session_id for s in sessions] == ["locomo-1", "locomo-2"]
    assert sessions[0].started_at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert [m.role for m in sessions[0].messages] == [Role.SUBJECT, Role.AGENT]
    assert sessions[0].summary == {"text": "Ada talked about suppliers."}
    for record in records:  # what the converter writes parses back as it was
        assert parse_line(1, to_line(record)) == record


def test_a_locomo_time_it_cannot_read_names_its_key() -> None:
    broken = json.loads(json.dumps(CONVERSATION))
    broken[0]["conversation"]["session_1_date_time"] = "yesterday"
    with pytest.raises(ConversionError) as caught:
        list(from_locomo(broken))
    assert caught.value.field.endswith("session_1_date_time")


def test_the_cli_writes_the_converted_lines(tmp_path: Path) -> None:
    out = tmp_path / "mem0.ndjson"
    result = CliRunner().invoke(
        app,
        ["import", str(MEM0_EXPORT), "--tenant", "acme", "--from", "mem0", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    lines = out.read_bytes().splitlines()
    assert len(lines) == 6
    assert all(parse_line(n, line) for n, line in enumerate(lines, 1))


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo is not shipped: set FACTLEDGER_LOCOMO")
async def test_the_locomo_file_converts_and_imports_without_an_error(importer: Importer) -> None:
    samples = read_json(LOCOMO)
    assert isinstance(samples, list)
    data = lines_of(list(from_locomo(samples)))
    report = await importer.run(data)
    assert report.error_count == 0, report.errors[:3]
    assert report.subjects == len(samples)
    turns = sum(
        len(turns)
        for sample in samples
        for key, turns in sample["conversation"].items()
        if isinstance(turns, list)
    )
    assert report.messages + report.withheld == turns


def test_a_kind_the_format_refuses_is_a_conversion_error() -> None:
    with pytest.raises(ConversionError) as caught:
        list(from_locomo(CONVERSATION, kind="Not A Kind"))
    assert caught.value.field == "kind"
