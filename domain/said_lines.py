"""What a request to forget what was said names: the subject's transcript lines (ADR 0174).

A request about something no profile field holds ("forget what I told you about my ex") is a
change of the reserved field `SAID_LINES`, whose value lists the lines it concerns, each as
`<session id>#<message index>`; no subject kind may declare a field of that name.
"""

from __future__ import annotations

from collections.abc import Iterable

from factledger.domain.errors import InvalidOperationError

SAID_LINES = "said_lines"
_SEPARATOR = "#"


def line_ref(session_id: str, message_index: int) -> str:
    return f"{session_id}{_SEPARATOR}{message_index}"


def parse_line_ref(ref: str) -> tuple[str, int]:
    """(session id, message index) of a line reference; refused, naming the value, when it is
    not one."""
    session_id, separator, index = ref.rpartition(_SEPARATOR)
    if not separator or not session_id or not index.isdigit():
        raise InvalidOperationError(
            f"forget_said: value: {ref!r} is not a line (<session id>#<message index>)"
        )
    return session_id, int(index)


def parse_line_refs(refs: Iterable[str]) -> list[tuple[str, int]]:
    return [parse_line_ref(ref) for ref in refs]
