"""structlog configuration: JSON lines when deployed, a readable console in development.

Called once by the composition root (`bootstrap`) or a CLI entry point, never at import time.
The core logs through `structlog.get_logger()` directly; this module only decides
how the lines are rendered and adds the last line of defence, `redact_sensitive`.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, MutableMapping
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, Processor

from factledger.api.log_exceptions import (
    exception_as_text,
    no_traceback,
    summarize_exc_info,
)

# Keys whose values may hold what a person said or typed. Call sites must never pass them
# (the tests check that with `capture_logs`, which bypasses processors); this only catches slips.
# Plural nouns (`messages`, `facts`) are left out on purpose: call sites use them for counts.
SENSITIVE_KEYS = frozenset(
    {
        "content",
        "text",
        "query",
        "prompt",
        "embedding",
        "email",
        "message",
        "transcript",
        "summary",
        "value",
        "values",
        "fact",
        "quote",
        "body",
        "body_json",
        "profile",
        "password",
        "api_key",
        "token",
        "authorization",
        "dsn",
    }
)
REDACTED = "[redacted]"


def redact_sensitive(_: object, __: str, event_dict: EventDict) -> EventDict:
    """Replaces the value of every known-sensitive key, at any depth of nested mappings."""
    return _redact(event_dict)


def _redact(mapping: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key in list(mapping):
        if key.lower() in SENSITIVE_KEYS:
            mapping[key] = REDACTED
        elif isinstance(mapping[key], MutableMapping):
            nested: dict[str, Any] = dict(mapping[key])
            mapping[key] = _redact(nested)
    return mapping


_METHOD_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "exception": logging.ERROR,
    "critical": logging.CRITICAL,
    "fatal": logging.CRITICAL,
}


def _drop_below(minimum: int) -> Processor:
    # Level filtering is a processor, not a filtering wrapper class: `capture_logs` replaces the
    # processors only, so tests still see every line after a CLI configured WARNING.
    def drop_below(_: object, method_name: str, event_dict: EventDict) -> EventDict:
        if _METHOD_LEVELS.get(method_name, logging.INFO) < minimum:
            raise structlog.DropEvent
        return event_dict

    return drop_below


def _shared_processors() -> list[Processor]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        # A stack of source lines, never of values.
        structlog.processors.StackInfoRenderer(),
    ]


def _final_processors(*, json_lines: bool) -> list[Processor]:
    # Exceptions become type-and-frame summaries before redaction and rendering, in both
    # modes: a message or a local variable can hold what a person typed.
    renderer: Processor
    if json_lines:
        renderer = structlog.processors.JSONRenderer()
        return [summarize_exc_info, redact_sensitive, renderer]
    # The formatter is a second line: `summarize_exc_info` already took `exc_info` away.
    renderer = structlog.dev.ConsoleRenderer(colors=False, exception_formatter=no_traceback)
    return [summarize_exc_info, exception_as_text, redact_sensitive, renderer]


# Loggers whose messages are built from exception reprs (asyncio's "Task exception was never
# retrieved" quotes the exception's arguments): their text is withheld, the summary kept.
_BUILT_MESSAGE_LOGGERS = frozenset({"asyncio"})
# Loggers whose arguments are addresses, process ids and signal names, never request data.
_TRUSTED_ARGUMENT_LOGGERS = frozenset({"uvicorn.error"})


def _foreign_event(_: object, __: str, event_dict: EventDict) -> EventDict:
    # `use_get_message=False` already left the template unformatted (its arguments can be
    # data); a message assembled before logging cannot be trusted at all.
    arguments = event_dict.pop("positional_args", ())
    record = event_dict.get("_record")
    if isinstance(record, logging.LogRecord):
        event_dict["logger"] = record.name
        if record.name.split(".")[0] in _BUILT_MESSAGE_LOGGERS:
            event_dict["event"] = f"{record.name}.message_withheld"
        elif record.name in _TRUSTED_ARGUMENT_LOGGERS and arguments:
            # A failure here would reach logging's own error report, which prints the arguments.
            with contextlib.suppress(TypeError, ValueError):
                event_dict["event"] = str(record.msg) % arguments
    return event_dict


def _stdlib_handler(*, json_lines: bool, stream: TextIO | None) -> logging.Handler:
    """One handler for the standard library's loggers (uvicorn, drivers, asyncio), rendering
    like structlog's own lines, exceptions summarized, arguments never interpolated."""
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _foreign_event,
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            *_final_processors(json_lines=json_lines),
        ],
        use_get_message=False,
        pass_foreign_args=True,
    )
    handler = _ContentFreeHandler(stream)
    handler.setFormatter(formatter)
    return handler


class _ContentFreeHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler that follows the current `sys.stderr` when given no stream (like
    structlog's loggers, `_printer`), and whose own failures name no record arguments:
    `logging.Handler.handleError` would print them with a traceback."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__(stream or sys.stderr)
        self._fixed = stream

    @property
    def stream(self) -> TextIO:
        return self._fixed or sys.stderr

    @stream.setter
    def stream(self, _: TextIO) -> None:
        """The stream is chosen at construction; `StreamHandler.__init__` sets it again."""

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        failure = type(sys.exc_info()[1]).__name__
        with contextlib.suppress(Exception):
            sys.stderr.write(f"log record of {record.name} not written: {failure}\n")


def _printer(stream: TextIO | None) -> Callable[..., structlog.PrintLogger]:
    # Without an explicit stream, resolve `sys.stderr` per logger rather than once: a CLI run
    # under a test runner must not leave loggers bound to a capture stream closed afterwards.
    def factory(*_: object) -> structlog.PrintLogger:
        return structlog.PrintLogger(file=stream or sys.stderr)

    return factory


def configure_logging(
    *, json_lines: bool, level: str = "INFO", stream: TextIO | None = None
) -> None:
    """Configures structlog for the whole process.

    - `json_lines=True`: one JSON object per line (production); otherwise a console renderer.
    - `redact_sensitive` runs after every other processor, just before rendering.
    - Exceptions are logged as their types and `module:line:function` frames, never a message,
      a value or a local variable (`log_exceptions`), by structlog and the standard library alike.
    - Standard-library loggers of our dependencies stay at WARNING, so drivers never echo
      statements or parameters at INFO, and render through the same processors with their
      arguments left out.
    """
    numeric_level = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    structlog.configure(
        processors=[
            _drop_below(numeric_level),
            *_shared_processors(),
            *_final_processors(json_lines=json_lines),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET),
        logger_factory=_printer(stream),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(
        level=logging.WARNING,
        handlers=[_stdlib_handler(json_lines=json_lines, stream=stream)],
        force=True,
    )
    # `factledger serve` gives uvicorn no logging config of its own (`log_config=None`); any
    # handler a uvicorn started elsewhere in the process installed would print tracebacks.
    for name in ("uvicorn", "uvicorn.error"):
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers.clear()
        uvicorn_logger.propagate = True
    # Its lifecycle lines (started, listening on) carry no data and are worth keeping.
    logging.getLogger("uvicorn").setLevel(logging.NOTSET)
    logging.getLogger("uvicorn.error").setLevel(max(numeric_level, logging.INFO))


def reset_logging() -> None:
    """Restores structlog's defaults (used by tests that configure logging)."""
    structlog.reset_defaults()
    logging.getLogger("uvicorn.error").setLevel(logging.NOTSET)
