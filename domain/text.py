"""Text every store and encoder can hold: no NUL, no lone surrogate.

A lone surrogate (`"\\udfff"`, which JSON can spell) cannot be encoded as UTF-8, so any
response, log line or SQLite row holding it fails; PostgreSQL refuses NUL in `text` and
`\\u0000` in `jsonb`. New text with either is refused where it enters (`check_text`); text the
ledger already holds is read back scrubbed (`scrub`), so the read side never fails on it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from factledger.domain.errors import InvalidValueError

# NUL, and any surrogate code point: Python joins a valid pair when it decodes JSON or UTF-8,
# so a surrogate left in a `str` is always unpaired.
_UNSAFE = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"
UNSAFE_TEXT_RULE = "must not contain NUL or unpaired surrogate characters"


def is_safe_text(text: str) -> bool:
    return _UNSAFE.search(text) is None


def check_text(text: str | None, what: str) -> None:
    """Raises `InvalidValueError` naming `what` (never the text) when `text` is unsafe."""
    if text is not None and not is_safe_text(text):
        raise InvalidValueError(f"{what}: {UNSAFE_TEXT_RULE}")


def check_json_text(value: object, what: str) -> None:
    """`check_text` on every key and string of a JSON value, naming the path."""
    if isinstance(value, str):
        check_text(value, what)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_text(str(key), what)
            check_json_text(item, f"{what}.{key}" if is_safe_text(str(key)) else what)
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for index, item in enumerate(value):
            check_json_text(item, f"{what}[{index}]")


def scrub(text: str) -> str:
    """`text` with each NUL and lone surrogate replaced by U+FFFD."""
    return _UNSAFE.sub(REPLACEMENT, text)


def scrub_json(value: object) -> object:
    """A copy of a JSON value with `scrub` applied to every key and string."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(str(k)): scrub_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_json(item) for item in value]
    return value
