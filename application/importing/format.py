"""The import format: one JSON record per line (NDJSON), each validated on its own.

Two record types (docs/import-format.md):

- `{"type": "subject", "kind": "lead", "ref": "crm-17"}` registers a subject;
- `{"type": "session", "subject": {"kind": ..., "ref": ...}, "session_id": ..., "channel": ...,
  "started_at": ..., "messages": [...], "summary": {...}}` records one past conversation with
  its messages inline: a session is recorded whole or not at all.

`parse_line` turns one line into a record or raises `ImportLineError` naming the line and the
field (`messages[3].at`), never the value: pydantic's own messages may quote the input.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
)
from pydantic_core import PydanticCustomError

from factledger.application.errors import ApplicationError
from factledger.domain.errors import InvalidValueError
from factledger.domain.sessions import MAX_MESSAGES
from factledger.domain.subject import MAX_REFERENCE
from factledger.domain.text import UNSAFE_TEXT_RULE, check_json_text, is_safe_text
from factledger.domain.transcript import MAX_MESSAGE_CHARS, Channel, Role

# The same alphabets the HTTP API accepts for kinds, references and session ids.
KIND_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
REF_PATTERN = rf"^[^/\s][^/]{{0,{MAX_REFERENCE - 1}}}$"
SESSION_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,100}$"
# A session of MAX_MESSAGES messages of MAX_MESSAGE_CHARS characters fits; nothing larger.
MAX_LINE_BYTES = 32 * 1024 * 1024


class ImportLineError(ApplicationError):
    """A line that cannot be imported: its number, the field and the rule (HTTP 422)."""

    def __init__(self, line: int, field: str, rule: str) -> None:
        super().__init__(f"line {line}: {field}: {rule}")
        self.line, self.field, self.rule = line, field, rule


def _safe(text: str) -> str:
    if not is_safe_text(text):
        raise PydanticCustomError("unsafe_text", UNSAFE_TEXT_RULE)
    return text


def _safe_json(value: Any) -> Any:
    try:
        check_json_text(value, "summary")
    except InvalidValueError:
        raise PydanticCustomError("unsafe_text", UNSAFE_TEXT_RULE) from None
    return value


SafeText = Annotated[str, AfterValidator(_safe)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SubjectRef(_Strict):
    kind: str = Field(pattern=KIND_PATTERN)
    ref: SafeText = Field(pattern=REF_PATTERN)


class SubjectLine(SubjectRef):
    type: Literal["subject"]


class MessageLine(_Strict):
    """`at` defaults to the previous message's time (the session's start for the first):
    a past conversation is never dated by the import's clock."""

    role: Role
    text: SafeText = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    at: AwareDatetime | None = None
    flagged: bool = False  # withheld by the caller: counted, never stored


class SessionLine(_Strict):
    type: Literal["session"]
    subject: SubjectRef
    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    channel: Channel
    started_at: AwareDatetime
    ended_at: AwareDatetime | None = None  # defaults to the last message's time
    messages: list[MessageLine] = Field(default_factory=list, max_length=MAX_MESSAGES)
    summary: Annotated[dict[SafeText, Any], AfterValidator(_safe_json)] | None = None


ImportRecord = SubjectLine | SessionLine
_RECORD: TypeAdapter[ImportRecord] = TypeAdapter(
    Annotated[ImportRecord, Field(discriminator="type")]
)
_TAGS = frozenset({"subject", "session"})


def _known_names() -> frozenset[str]:
    models: tuple[type[BaseModel], ...] = (SubjectRef, SubjectLine, MessageLine, SessionLine)
    return frozenset(name for model in models for name in model.model_fields)


_KNOWN = _known_names()


def field_path(loc: tuple[int | str, ...], document: Any = None) -> str:
    """Where an error is, by the format's own names and by positions only: a key the caller
    chose (an unknown field, a summary's key) may be content, so it is named by its place
    among its object's keys (`summary.keys[2]`), never by itself."""
    parts = list(loc[1:] if loc and loc[0] in _TAGS else loc)
    node = document
    path = ""
    for part in parts:
        if isinstance(part, int):
            step = f"[{part}]"
        elif part in _KNOWN:
            step = f".{part}" if path else part
        else:
            keys = list(node) if isinstance(node, dict) else []
            where = keys.index(part) if part in keys else "?"
            step = f"{'.' if path else ''}keys[{where}]"
        path += step
        node = _child(node, part)
    return path or "type"


def _child(node: Any, part: int | str) -> Any:
    if isinstance(node, dict):
        return node.get(part)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return None


def _document(raw: bytes | str) -> Any:
    """The line as JSON for `field_path` (None when it is not JSON)."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _rule_of(error: Any) -> str:
    kind = str(error.get("type", ""))
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return "must be 'subject' or 'session'"
    # pydantic's messages state the rule (a pattern, a length, allowed values), not the input.
    return str(error.get("msg", "invalid"))


def parse_line(number: int, raw: bytes | str) -> ImportRecord:
    """One line as a record, or `ImportLineError` naming `number` and the first bad field."""
    if len(raw) > MAX_LINE_BYTES:
        raise ImportLineError(number, "line", f"longer than {MAX_LINE_BYTES} bytes")
    try:
        return _RECORD.validate_json(raw)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        loc = tuple(first.get("loc", ()))
        field = "line" if first.get("type") == "json_invalid" else field_path(loc, _document(raw))
        raise ImportLineError(number, field, _rule_of(first)) from None


def to_line(record: ImportRecord) -> str:
    """A record as one line of the format (the converters write these)."""
    return record.model_dump_json(exclude_none=True, exclude_defaults=False)
