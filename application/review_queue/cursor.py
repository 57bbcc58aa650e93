"""The queue's cursors as callers hold them: opaque text, and the ages filters take.

A cursor is a position in the ledger's log, before or after which the next page lies; it is
written as URL-safe text so that callers pass it back as they got it and never build one.
"""

from __future__ import annotations

import base64
import re
from datetime import timedelta

from factledger.application.review_queue.queue import QueueCursor

_CURSOR = re.compile(r"^(a|b|s)([0-9]{1,18})$")
_AGE = re.compile(r"^([1-9][0-9]{0,4})(m|h|d|w)$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
AGE_PATTERN = r"^([1-9][0-9]{0,4}(m|h|d|w))?$"  # blank: no bound
CURSOR_PATTERN = r"^[A-Za-z0-9_-]{0,40}$"


class BadCursorError(ValueError):
    """The text is not a cursor this service wrote."""


def encode_cursor(cursor: QueueCursor) -> str:
    text = f"a{cursor.after}" if cursor.after is not None else f"b{cursor.before}"
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode(text: str) -> tuple[str, int]:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        raise BadCursorError(text) from None
    found = _CURSOR.fullmatch(raw)
    if found is None:
        raise BadCursorError(text)
    return found.group(1), int(found.group(2))


def decode_cursor(text: str) -> QueueCursor:
    kind, position = _decode(text)
    if kind == "s":
        raise BadCursorError(text)
    return QueueCursor(after=position) if kind == "a" else QueueCursor(before=position)


def encode_snapshot(position: int) -> str:
    """What a reviewer saw: the queue up to this position (a decision on "all that match"
    never reaches proposals recorded after it)."""
    return base64.urlsafe_b64encode(f"s{position}".encode()).decode().rstrip("=")


def decode_snapshot(text: str) -> int:
    kind, position = _decode(text)
    if kind != "s":
        raise BadCursorError(text)
    return position


def parse_age(text: str) -> timedelta:
    """`30m`, `12h`, `7d`, `2w` -> the duration; `ValueError` for anything else."""
    found = _AGE.fullmatch(text)
    if found is None:
        raise ValueError(text)
    return timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
