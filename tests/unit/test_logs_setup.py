"""The log configuration renders JSON or console lines and redacts sensitive keys."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from factledger.api.log_setup import REDACTED, configure_logging, redact_sensitive, reset_logging


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    yield buffer
    reset_logging()


def test_json_lines_carry_the_event_name_level_and_timestamp(stream: io.StringIO) -> None:
    configure_logging(json_lines=True, stream=stream)
    structlog.get_logger().info("session.recorded", session_id="s-1", messages=4)
    line = json.loads(stream.getvalue().strip())
    assert line["event"] == "session.recorded"
    assert line["level"] == "info"
    assert line["messages"] == 4
    assert line["timestamp"].endswith("Z")


def test_sensitive_keys_are_redacted_even_when_nested(stream: io.StringIO) -> None:
    configure_logging(json_lines=True, stream=stream)
    structlog.get_logger().warning(
        "oops", text="my sister's diagnosis", extra={"Query": "where do I live"}, count=2
    )
    output = stream.getvalue()
    assert "diagnosis" not in output
    assert "where do I live" not in output
    line = json.loads(output.strip())
    assert line["text"] == REDACTED
    assert line["extra"]["Query"] == REDACTED
    assert line["count"] == 2


def test_console_rendering_is_not_json_and_still_redacts(stream: io.StringIO) -> None:
    configure_logging(json_lines=False, stream=stream)
    structlog.get_logger().info("recall.served", transcript="hello there", notes=2)
    output = stream.getvalue()
    assert "recall.served" in output
    assert "hello there" not in output
    with pytest.raises(json.JSONDecodeError):
        json.loads(output)


def test_level_filters_lower_lines(stream: io.StringIO) -> None:
    configure_logging(json_lines=True, level="WARNING", stream=stream)
    structlog.get_logger().info("quiet.event")
    assert stream.getvalue() == ""


def test_redact_processor_leaves_other_keys_alone() -> None:
    event = {"event": "x", "subject_id": "abc", "prompt": "secret"}
    assert redact_sensitive(None, "info", event) == {
        "event": "x",
        "subject_id": "abc",
        "prompt": REDACTED,
    }


def test_a_configured_level_does_not_hide_lines_from_capture_logs(stream: io.StringIO) -> None:
    configure_logging(json_lines=True, level="WARNING", stream=stream)
    with structlog.testing.capture_logs() as logs:
        structlog.get_logger().info("still.captured", count=1)
    assert [entry["event"] for entry in logs] == ["still.captured"]


def test_loggers_follow_the_current_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = io.StringIO(), io.StringIO()
    monkeypatch.setattr("sys.stderr", first)
    configure_logging(json_lines=True)
    try:
        first.close()  # e.g. a test runner's capture stream, closed after a CLI test
        monkeypatch.setattr("sys.stderr", second)
        structlog.get_logger().warning("after.capture", count=1)
    finally:
        reset_logging()
    assert "after.capture" in second.getvalue()


SECRET_MESSAGE = "what-the-subject-said"
SECRET_LOCAL = "held-in-a-local"


def fail_deep() -> None:
    transcript = SECRET_LOCAL  # a renderer showing locals would print it
    raise KeyError(f"{SECRET_MESSAGE} {transcript}")


def fail_with_a_cause() -> None:
    try:
        fail_deep()
    except KeyError as exc:
        raise RuntimeError(SECRET_MESSAGE) from exc


@pytest.mark.parametrize("json_lines", [False, True], ids=["console", "json"])
def test_an_exception_is_logged_as_types_and_frames_only(
    stream: io.StringIO, json_lines: bool
) -> None:
    configure_logging(json_lines=json_lines, stream=stream)
    try:
        fail_with_a_cause()
    except RuntimeError as exc:
        structlog.get_logger().error("api.unexpected_error", exc_info=exc)
        structlog.get_logger().exception("also.with_exc_info_true")
    output = stream.getvalue()
    assert SECRET_MESSAGE not in output
    assert SECRET_LOCAL not in output
    for expected in ("RuntimeError", "KeyError", f"{__name__}:", ":fail_deep"):
        assert expected in output
    assert len(output.splitlines()) < 30


def test_a_json_exception_is_a_structured_summary(stream: io.StringIO) -> None:
    configure_logging(json_lines=True, stream=stream)
    try:
        raise ExceptionGroup("group", [ValueError(SECRET_MESSAGE)])
    except ExceptionGroup as exc:
        structlog.get_logger().error("grouped.failure", exc_info=exc)
    line = json.loads(stream.getvalue())
    assert line["exception"]["type"] == "ExceptionGroup"
    assert line["exception"]["exceptions"] == [{"type": "ValueError", "frames": []}]
    assert all(frame.count(":") == 2 for frame in line["exception"]["frames"])


@pytest.mark.parametrize("json_lines", [False, True], ids=["console", "json"])
def test_standard_library_records_render_without_arguments_or_tracebacks(
    stream: io.StringIO, json_lines: bool
) -> None:
    configure_logging(json_lines=json_lines, stream=stream)
    try:
        fail_deep()
    except KeyError as exc:
        logging.getLogger("uvicorn.error").error("Exception in ASGI application", exc_info=exc)
        logging.getLogger("psycopg").error("query failed: %s", SECRET_MESSAGE, exc_info=exc)
        asyncio_built = f"Task exception was never retrieved {exc!r}"  # as asyncio builds it
        logging.getLogger("asyncio").error(asyncio_built)
    logging.getLogger("uvicorn.error").info("Uvicorn running on %s", "http://127.0.0.1:8000")
    output = stream.getvalue()
    assert SECRET_MESSAGE not in output
    assert SECRET_LOCAL not in output
    for expected in ("KeyError", "query failed: %s", "asyncio.message_withheld", ":8000"):
        assert expected in output


def test_a_failing_standard_library_record_reports_no_arguments(
    stream: io.StringIO, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(json_lines=True, stream=stream)
    stream.close()  # writing fails; logging's own report would print the record's arguments
    logging.getLogger("psycopg").error("query failed: %s", SECRET_MESSAGE)
    report = capsys.readouterr().err
    assert "psycopg" in report
    assert SECRET_MESSAGE not in report
