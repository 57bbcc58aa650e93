"""`HistoryImport`: sessions recorded whole with their own times, the safety filter on every
text, bad lines reported by number and field, re-imports and resumes that add nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence

import pytest
import structlog

from factledger.application.importing.importer import (
    ImportMismatchError,
    ImportOptions,
    OnError,
)
from factledger.application.importing.lines import NumberedLine
from factledger.application.importing.positions import ImportPositionsUnavailableError
from factledger.application.ledger.commands import RecordSession
from factledger.application.ledger.event_store_errors import EventStoreUnavailableError
from factledger.application.ledger.past_sessions import PastOutcome
from factledger.testing.history import CARD, HistoryShape, history_bytes

from .conftest import TENANT, Importer, stream

SHAPE = HistoryShape(subjects=3, sessions_per_subject=4, messages_per_session=6)


def session(session_id: str, started: str, *messages: dict[str, object], **more: object) -> str:
    record = {
        "type": "session",
        "subject": {"kind": "lead", "ref": "crm-17"},
        "session_id": session_id,
        "channel": "chat",
        "started_at": started,
        "messages": list(messages),
        **more,
    }
    return json.dumps(record)


def said(text: str, at: str | None = None, role: str = "subject") -> dict[str, object]:
    return {"role": role, "text": text, "at": at}


def ndjson(*lines: str) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode()


async def test_a_generated_history_is_recorded_whole_and_counted(importer: Importer) -> None:
    report = await importer.run(history_bytes(SHAPE))
    assert report.finished
    assert report.error_count == 0
    assert report.subjects == 3
    assert report.sessions == 12
    assert report.reviews == 12
    assert report.messages + report.withheld == SHAPE.messages
    subject = importer.ledger.subject(
        TENANT, importer.ledger.subject_id_for(TENANT, "lead", "crm-00000")
    )
    assert sorted(subject.sessions) == [f"hist-{k:04d}" for k in range(4)]


async def test_sessions_keep_their_own_times(importer: Importer) -> None:
    data = ndjson(
        session(
            "s1",
            "2025-01-14T09:00:00+00:00",
            said("We work with Supplier A.", "2025-01-14T09:01:00+00:00"),
            said("Noted.", role="agent"),  # no time: the previous message's
        )
    )
    await importer.run(data)
    subject = importer.ledger.subject(
        TENANT, importer.ledger.subject_id_for(TENANT, "lead", "crm-17")
    )
    info = subject.sessions["s1"]
    assert info.started_at.isoformat() == "2025-01-14T09:00:00+00:00"
    assert [t.isoformat() if t else None for t in info.message_times] == [
        "2025-01-14T09:01:00+00:00",
        "2025-01-14T09:01:00+00:00",
    ]


async def test_importing_the_same_file_again_adds_nothing(importer: Importer) -> None:
    data = history_bytes(SHAPE)
    first = await importer.run(data)
    events = importer.event_count()
    again = await importer.run(data)  # same id: the finished import answers with its report
    assert importer.event_count() == events
    assert again.sessions == first.sessions
    assert again.resumed_after == again.lines
    other = await importer.run(data, import_id="another-id")  # no position: every line re-checked
    assert importer.event_count() == events
    assert other.sessions == 0
    assert other.unchanged == 12
    assert other.subjects == 0


async def test_without_an_import_id_a_rerun_is_still_a_no_op(importer: Importer) -> None:
    data = history_bytes(SHAPE)
    await importer.run(data, import_id=None)
    events = importer.event_count()
    report = await importer.run(data, import_id=None)
    assert importer.event_count() == events
    assert report.unchanged == 12


class CrashError(Exception):
    pass


async def crashing(data: bytes, after_line: int) -> AsyncIterator[NumberedLine]:
    async for line in stream(data):
        if line.number > after_line:
            raise CrashError
        yield line


async def test_a_failed_import_saves_how_far_it_got_and_resumes_after_it(
    importer: Importer,
) -> None:
    data = history_bytes(SHAPE)
    options = ImportOptions(TENANT, "file-1", OnError.SKIP, checkpoint_lines=4, batch_lines=4)
    with pytest.raises(CrashError):  # the stream breaks off (a client gone) after line 9
        await importer.use_case().run(crashing(data, after_line=9), options)
    saved = await importer.positions.get(TENANT, "file-1")
    assert saved is not None
    # Line 9 was read, but its batch (lines 9-12) never ran: the position stands at 8.
    assert (saved.line, saved.finished) == (8, False)
    report = await importer.run(data, checkpoint_lines=4)
    assert report.resumed_after == 8
    assert report.finished
    assert (report.sessions, report.unchanged) == (12, 0)
    subject = importer.ledger.subject(
        TENANT, importer.ledger.subject_id_for(TENANT, "lead", "crm-00002")
    )
    assert len(subject.sessions) == 4


async def test_a_failing_position_store_ends_the_import_and_a_rerun_records_nothing_twice(
    importer: Importer,
) -> None:
    data = history_bytes(SHAPE)

    async def down(*_: object) -> bool:
        raise ImportPositionsUnavailableError("positions down")

    importer.positions.save = down  # type: ignore[method-assign]
    with pytest.raises(ImportPositionsUnavailableError):
        await importer.run(data, import_id="file-2", checkpoint_lines=2)
    # Recording is idempotent: what the failed run recorded is found unchanged next time.
    del importer.positions.save
    report = await importer.run(data, import_id="file-2")
    assert report.resumed_after == 0
    assert report.unchanged >= 1


async def test_resuming_with_other_lines_under_the_same_id_is_refused(importer: Importer) -> None:
    data = history_bytes(SHAPE)
    options = ImportOptions(TENANT, "file-1", OnError.SKIP, checkpoint_lines=2, batch_lines=2)
    with pytest.raises(CrashError):
        await importer.use_case().run(crashing(data, after_line=5), options)
    changed = data.replace(b"crm-00000", b"crm-00009", 1)
    with pytest.raises(ImportMismatchError):
        await importer.run(changed)
    with pytest.raises(ImportMismatchError):  # a file shorter than the position
        await importer.run(data.split(b"\n", 1)[0] + b"\n")


BAD = (
    '{"type": "subject", "kind": "lead", "ref": "crm-1"}',
    session("s1", "2025-01-14T09:00:00+00:00", said("hi", "2025-01-14T08:00:00+00:00")),
    session("s2", "2025-02-01T09:00:00+00:00", said("hello")),
    '{"type": "session"}',
    session("s3", "2025-03-01T09:00:00+00:00", said("later")),
)


async def test_bad_lines_are_skipped_and_reported_by_number_and_field(importer: Importer) -> None:
    report = await importer.run(ndjson(*BAD))
    assert report.finished
    assert report.sessions == 2
    assert [(e.line, e.field, e.error) for e in report.errors] == [
        (2, "messages[0].at", "ConversationTimeError"),
        (4, "subject", "ImportLineError"),
    ]
    subject = importer.ledger.subject(
        TENANT, importer.ledger.subject_id_for(TENANT, "lead", "crm-17")
    )
    assert sorted(subject.sessions) == ["s2", "s3"]


async def test_a_bad_lines_rule_does_not_repeat_its_field(importer: Importer) -> None:
    report = await importer.run(ndjson(*BAD))
    time_error = report.errors[0]
    assert time_error.field == "messages[0].at"
    assert time_error.rule == "is earlier than the session's start or the message before it"
    assert all(not e.rule.startswith(f"{e.field}:") for e in report.errors)


async def test_stop_ends_at_the_first_bad_line_and_a_rerun_stops_there_again(
    importer: Importer,
) -> None:
    report = await importer.run(ndjson(*BAD), on_error=OnError.STOP)
    assert report.stopped
    assert not report.finished
    assert [(e.line, e.field) for e in report.errors] == [(2, "messages[0].at")]
    assert report.subjects == 1
    assert report.sessions == 0
    again = await importer.run(ndjson(*BAD), on_error=OnError.STOP)
    assert again.resumed_after == 1
    assert again.error_count == 1
    assert again.stopped
    fixed = await importer.run(ndjson(*BAD), on_error=OnError.SKIP)
    assert fixed.finished
    assert fixed.sessions == 2
    assert fixed.error_count == 2


async def test_a_session_before_the_subjects_latest_takes_its_place_in_time(
    importer: Importer,
) -> None:
    data = ndjson(
        session("late", "2025-06-01T09:00:00+00:00", said("June")),
        session("early", "2025-01-01T09:00:00+00:00", said("January")),
        session("same-day", "2025-06-01T09:00:00+00:00", said("also June")),
    )
    report = await importer.run(data)
    assert report.errors == []
    assert report.sessions == 3
    again = await importer.run(data, import_id="again")
    assert (again.sessions, again.unchanged) == (0, 3)


async def test_a_session_recorded_with_other_content_is_a_line_error(importer: Importer) -> None:
    await importer.run(ndjson(session("s1", "2025-01-14T09:00:00+00:00", said("one"))))
    report = await importer.run(
        ndjson(session("s1", "2025-01-14T09:00:00+00:00", said("two"))), import_id="v2"
    )
    assert [(e.line, e.error) for e in report.errors] == [(1, "SessionConflictError")]


async def test_unsafe_messages_are_withheld_and_an_unsafe_summary_refuses_the_line(
    importer: Importer,
) -> None:
    data = ndjson(
        session(
            "s1",
            "2025-01-14T09:00:00+00:00",
            said(f"My card is {CARD}."),
            said("Ignore me", role="agent") | {"flagged": True},
            said("We use Supplier A."),
        ),
        session("s2", "2025-01-15T09:00:00+00:00", said("ok"), summary={"card": CARD}),
    )
    with structlog.testing.capture_logs() as logs:
        report = await importer.run(data)
    assert report.messages == 1
    assert report.withheld == 2
    assert [(e.line, e.field) for e in report.errors] == [(2, "summary.card")]
    subject = importer.ledger.subject(
        TENANT, importer.ledger.subject_id_for(TENANT, "lead", "crm-17")
    )
    assert [text for _, text in subject.sessions["s1"].messages] == ["We use Supplier A."]
    assert CARD not in repr(logs)
    assert "Supplier A" not in repr(logs)


async def test_a_message_in_the_future_is_refused(importer: Importer) -> None:
    future = importer.clock.now().replace(year=2030).isoformat()
    report = await importer.run(
        ndjson(session("s1", "2025-01-14T09:00:00+00:00", said("x", future)))
    )
    assert [(e.line, e.field) for e in report.errors] == [(1, "messages[0].at")]


async def test_tenants_never_share_subjects_or_positions(importer: Importer) -> None:
    data = history_bytes(SHAPE)
    await importer.run(data)
    report = await importer.run(data, tenant="globex")
    assert report.resumed_after == 0
    assert report.subjects == 3
    assert report.sessions == 12


async def test_stop_counts_nothing_past_the_bad_line_even_if_recorded_beside_it(
    importer: Importer,
) -> None:
    other = session("b1", "2025-01-14T09:00:00+00:00", said("fine")).replace("crm-17", "crm-18")
    data = ndjson(
        session("a1", "2025-01-14T09:00:00+00:00", said("x", "2025-01-01T00:00:00Z")), other
    )
    stopped = await importer.run(data, on_error=OnError.STOP)
    assert stopped.stopped
    assert (stopped.sessions, stopped.lines) == (0, 0)  # b1 went in beside a1, uncounted
    rerun = await importer.run(data, import_id="rerun")
    assert (rerun.sessions, rerun.unchanged, rerun.error_count) == (0, 1, 1)


async def test_a_ledger_that_fails_mid_batch_ends_the_import_with_its_own_error(
    importer: Importer,
) -> None:
    data = history_bytes(SHAPE)
    record, calls = importer.ledger.record_past_sessions, [0]

    def flaky(cmds: Sequence[RecordSession], *, stop_on_error: bool = False) -> list[PastOutcome]:
        calls[0] += 1
        if calls[0] == 2:
            raise EventStoreUnavailableError("event store down")
        return record(cmds, stop_on_error=stop_on_error)

    importer.ledger.record_past_sessions = flaky  # type: ignore[method-assign]
    with pytest.raises(EventStoreUnavailableError):
        await importer.run(data)
    assert calls[0] >= 2
    del importer.ledger.record_past_sessions
    report = await importer.run(data)  # nothing of the failed batch was counted
    assert report.resumed_after == 0
    assert report.sessions + report.unchanged == 12
