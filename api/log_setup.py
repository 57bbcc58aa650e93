"""structlog configuration: JSON lines when deployed, a readable console in development.

Called once by the composition root (`bootstrap`) or a CLI entry point, never at import time.
The core logs through `structlog.get_logger()` directly (ADR 0008); this module only decides
how the lines are rendered and adds the last line of defence, `redact_sensitive`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, MutableMapping
from typing import Any, TextIO

import structlog
from structlog.typing import EventDict, Processor

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
        # Renders exc_info as a traceback string: exception messages must name ids only
        # (STYLE section 6), so tracebacks are safe to keep.
        structlog.processors.StackInfoRenderer(),
    ]


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
    - Standard-library loggers of our dependencies stay at WARNING, so drivers never echo
      statements or parameters at INFO.
    """
    numeric_level = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    renderer: Processor
    if json_lines:
        renderer = structlog.processors.JSONRenderer()
        formatting: list[Processor] = [structlog.processors.format_exc_info]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=False)
        formatting = []
    structlog.configure(
        processors=[
            _drop_below(numeric_level),
            *_shared_processors(),
            *formatting,
            redact_sensitive,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET),
        logger_factory=_printer(stream),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=logging.WARNING, stream=stream or sys.stderr, force=True)


def reset_logging() -> None:
    """Restores structlog's defaults (used by tests that configure logging)."""
    structlog.reset_defaults()
