"""Exceptions as logs may carry them: types and frames, never messages, values or locals.

An exception's message can quote what a person typed (a driver echoing a failed value, a vendor
error echoing a request body), and a traceback renderer that shows locals prints decrypted
values and transcripts. So every exception, from structlog or the standard library, in console
and JSON modes alike, is reduced to the chain of its types and a bounded stack of
`module:line:function` frames before any renderer sees it.
"""

from __future__ import annotations

import sys
import traceback
from types import TracebackType
from typing import Any, TextIO

from structlog.typing import EventDict, ExcInfo

# Enough to place a failure; a deep framework stack adds lines, not insight.
MAX_FRAMES = 30
# Causes and contexts followed, and sub-exceptions of a group listed, at most.
MAX_CHAIN = 5


def type_name(exc: BaseException) -> str:
    """`RuntimeError`, or `module.Class` for anything not built in."""
    klass = type(exc)
    if klass.__module__ == "builtins":
        return klass.__qualname__
    return f"{klass.__module__}.{klass.__qualname__}"


def frames(tb: TracebackType | None) -> list[str]:
    """The innermost `MAX_FRAMES` frames as `module:line:function`: no paths, no source, no
    locals."""
    listed = [
        f"{frame.f_globals.get('__name__', '?')}:{line}:{frame.f_code.co_name}"
        for frame, line in traceback.walk_tb(tb)
    ]
    return listed[-MAX_FRAMES:]


def summarize(exc: BaseException, *, depth: int = 0) -> dict[str, Any]:
    """The exception's type, frames, and the same for its cause (or context) and, for a group,
    its first sub-exceptions; never its message or arguments."""
    summary: dict[str, Any] = {"type": type_name(exc), "frames": frames(exc.__traceback__)}
    if depth >= MAX_CHAIN:
        return summary
    linked = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if linked is not None:
        summary["cause"] = summarize(linked, depth=depth + 1)
    if isinstance(exc, BaseExceptionGroup):
        summary["exceptions"] = [
            summarize(inner, depth=depth + 1) for inner in exc.exceptions[:MAX_CHAIN]
        ]
    return summary


def as_text(summary: dict[str, Any], *, indent: str = "") -> str:
    """A summary as indented lines, for the console renderer."""
    lines = [f"{indent}{summary['type']}"]
    lines += [f"{indent}  at {frame}" for frame in summary["frames"]]
    for inner in summary.get("exceptions", ()):
        lines.append(f"{indent}  in the group:")
        lines.append(as_text(inner, indent=indent + "    "))
    if "cause" in summary:
        lines.append(f"{indent}caused by:")
        lines.append(as_text(summary["cause"], indent=indent))
    return "\n".join(lines)


def _exception_of(exc_info: object) -> BaseException | None:
    if isinstance(exc_info, BaseException):
        return exc_info
    if isinstance(exc_info, tuple) and len(exc_info) == 3:
        value = exc_info[1]
        return value if isinstance(value, BaseException) else None
    if exc_info is True:
        return sys.exc_info()[1]
    return None


def summarize_exc_info(_: object, __: str, event_dict: EventDict) -> EventDict:
    """Processor: replaces `exc_info` (and any pre-rendered `exception` text) by a summary, so
    no renderer ever formats a traceback itself. Runs before every renderer, JSON or console."""
    exc = _exception_of(event_dict.pop("exc_info", None))
    event_dict.pop("exception", None)
    if exc is not None:
        event_dict["exception"] = summarize(exc)
    return event_dict


def exception_as_text(_: object, __: str, event_dict: EventDict) -> EventDict:
    """Processor for the console: the summary as the text block the console renderer prints
    under the line."""
    summary = event_dict.get("exception")
    if isinstance(summary, dict):
        event_dict["exception"] = as_text(summary)
    return event_dict


def no_traceback(sio: TextIO, exc_info: ExcInfo) -> None:
    """The console renderer's exception formatter, for an `exc_info` that slipped past
    `summarize_exc_info`: the summary, never a traceback with values."""
    if exc_info[1] is not None:
        sio.write("\n" + as_text(summarize(exc_info[1])))
