"""Converters from exports people have to the import format: pure functions over parsed JSON.

- `from_locomo`: LoCoMo-shaped conversation files (a list of samples, each with
  `conversation.speaker_a/b`, `session_<n>` turn lists and `session_<n>_date_time` like
  "1:56 pm on 8 May, 2023"). Speaker A is the subject (`kind`, ref `<sample_id>:<name>`);
  speaker B's turns are imported as `agent` lines: they are not the subject's words. Times carry
  no zone in the file and are read as UTC; turns have no time and take the session's.
  `session_summary.session_<n>_summary` becomes the session's summary.
- `from_mem0`: a mem0 export: the memories its `get_all` returns (`results` or `memories`, or
  the bare list) and, optionally, each memory's `history` (a list of entries with `memory_id`,
  or a map memory id -> entries) with `event` ADD / UPDATE / DELETE, `old_memory`,
  `new_memory` and `created_at`. A memory without history is its own ADD at `created_at`.
  Each user (`user_id`, else `agent_id`) becomes a subject; each UTC day of events one session
  (`mem0-<date>`, channel `chat`) of `system` lines ("mem0 memory added: ..."): mem0's
  memories are a model's conclusions, never the subject's words, so they go in as notes that
  a reviewer or the subject can act on, and the proposals step does not take them as said.

Both sort each subject's sessions by time (the import refuses a subject's sessions out of
order) and raise `ConversionError` naming the path of what they cannot read, never its value.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from factledger.application.errors import ApplicationError
from factledger.application.importing.format import (
    ImportRecord,
    MessageLine,
    SessionLine,
    SubjectLine,
    field_path,
)
from factledger.domain.transcript import MAX_MESSAGE_CHARS, Channel, Role

_LOCOMO_TIME = "%I:%M %p on %d %B, %Y"
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_REF_UNSAFE = re.compile(r"[/\s]+")


class ConversionError(ApplicationError):
    """An export the converter cannot read; names the path and the rule."""

    def __init__(self, path: str, rule: str) -> None:
        super().__init__(f"{path}: {rule}")
        self.field = path


def _ref(*parts: str) -> str:
    return ":".join(_REF_UNSAFE.sub("-", p.strip()) for p in parts)[:200]


def _text(value: object) -> str | None:
    text = value.strip() if isinstance(value, str) else ""
    return text[:MAX_MESSAGE_CHARS] if text else None


def _session(
    kind: str,
    ref: str,
    session_id: str,
    started: datetime,
    messages: list[MessageLine],
    **more: Any,
) -> SessionLine:
    return SessionLine.model_validate(
        {
            "type": "session",
            "subject": {"kind": kind, "ref": ref},
            "session_id": session_id,
            "channel": more.pop("channel", Channel.CHAT),
            "started_at": started,
            "messages": messages,
            **more,
        }
    )


def from_locomo(data: object, *, kind: str = "person") -> Iterator[ImportRecord]:
    """The records of a LoCoMo-shaped file (see the module's docstring)."""
    return _validated(_locomo(data, kind))


def from_mem0(data: object, *, kind: str = "person") -> Iterator[ImportRecord]:
    """The records of a mem0 export (see the module's docstring)."""
    return _validated(_mem0(data, kind))


def _validated(records: Iterator[ImportRecord]) -> Iterator[ImportRecord]:
    """`records`, a record the format refuses (a `--kind` it does not allow, a reference too
    long) as a `ConversionError` naming the record's field."""
    try:
        yield from records
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        field = field_path(tuple(first.get("loc", ()))) if first.get("loc") else "record"
        raise ConversionError(field, str(first["msg"])) from None


def _locomo(data: object, kind: str) -> Iterator[ImportRecord]:
    if not isinstance(data, list):
        raise ConversionError("$", "must be a list of conversations")
    for n, sample in enumerate(data):
        path = f"$[{n}]"
        if not isinstance(sample, Mapping) or not isinstance(sample.get("conversation"), Mapping):
            raise ConversionError(f"{path}.conversation", "must be an object")
        conversation = sample["conversation"]
        subject_name = conversation.get("speaker_a")
        if not isinstance(subject_name, str) or not subject_name.strip():
            raise ConversionError(f"{path}.conversation.speaker_a", "must be a name")
        ref = _ref(str(sample.get("sample_id", n)), subject_name)
        yield SubjectLine(type="subject", kind=kind, ref=ref)
        summaries = sample.get("session_summary") or {}
        sessions = []
        for key, turns in conversation.items():
            found = _SESSION_KEY.match(key)
            if found is None:
                continue
            number = int(found.group(1))
            started = _locomo_time(conversation, number, f"{path}.conversation")
            messages = [
                MessageLine(
                    role=Role.SUBJECT if t.get("speaker") == subject_name else Role.AGENT, text=text
                )
                for t in turns
                if isinstance(t, Mapping) and (text := _text(t.get("text")))
            ]
            summary = _text(summaries.get(f"session_{number}_summary"))
            sessions.append((started, number, messages, summary))
        for started, number, messages, summary in sorted(sessions, key=lambda s: (s[0], s[1])):
            more = {} if summary is None else {"summary": {"text": summary}}
            yield _session(kind, ref, f"locomo-{number}", started, messages, **more)


def _locomo_time(conversation: Mapping[str, Any], number: int, path: str) -> datetime:
    key = f"session_{number}_date_time"
    raw = conversation.get(key)
    try:
        return datetime.strptime(str(raw), _LOCOMO_TIME).replace(tzinfo=UTC)
    except ValueError:
        raise ConversionError(f"{path}.{key}", f"must read as '{_LOCOMO_TIME}'") from None


_MEM0_VERBS = {"ADD": "added", "UPDATE": "updated", "DELETE": "deleted"}


def _mem0(data: object, kind: str) -> Iterator[ImportRecord]:
    memories = data
    if isinstance(data, Mapping):
        memories = data.get("results", data.get("memories"))
    if not isinstance(memories, list):
        raise ConversionError("$.results", "must be a list of memories")
    history = _mem0_history(data.get("history") if isinstance(data, Mapping) else None)
    days: dict[str, dict[str, list[tuple[datetime, str]]]] = defaultdict(lambda: defaultdict(list))
    for n, memory in enumerate(memories):
        path = f"$.results[{n}]"
        if not isinstance(memory, Mapping):
            raise ConversionError(path, "must be an object")
        owner = memory.get("user_id") or memory.get("agent_id")
        if not isinstance(owner, str) or not owner.strip():
            raise ConversionError(f"{path}.user_id", "must name the memory's user")
        entries = history.get(str(memory.get("id"))) or [
            {
                "event": "ADD",
                "new_memory": memory.get("memory"),
                "created_at": memory.get("created_at"),
            }
        ]
        for k, entry in enumerate(entries):
            note = _mem0_note(entry)
            if note is not None:
                at = _mem0_time(entry.get("created_at"), f"{path}.history[{k}].created_at")
                days[owner][at.date().isoformat()].append((at, note))
    for owner in sorted(days):
        ref = _ref(owner)
        yield SubjectLine(type="subject", kind=kind, ref=ref)
        for day in sorted(days[owner]):
            notes = sorted(days[owner][day])
            messages = [MessageLine(role=Role.SYSTEM, text=text, at=at) for at, text in notes]
            yield _session(kind, ref, f"mem0-{day}", notes[0][0], messages)


def _mem0_history(raw: object) -> dict[str, list[Mapping[str, Any]]]:
    by_memory: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    if isinstance(raw, Mapping):
        for memory_id, entries in raw.items():
            by_memory[str(memory_id)].extend(e for e in entries or [] if isinstance(e, Mapping))
    elif isinstance(raw, list):
        for entry in raw:
            if isinstance(entry, Mapping):
                by_memory[str(entry.get("memory_id"))].append(entry)
    return by_memory


def _mem0_note(entry: Mapping[str, Any]) -> str | None:
    verb = _MEM0_VERBS.get(str(entry.get("event", "")).upper())
    new, old = _text(entry.get("new_memory")), _text(entry.get("old_memory"))
    if verb == "added" and new:
        return f"mem0 memory added: {new}"[:MAX_MESSAGE_CHARS]
    if verb == "updated" and new:
        was = f" (was: {old})" if old else ""
        return f"mem0 memory updated: {new}{was}"[:MAX_MESSAGE_CHARS]
    if verb == "deleted" and (old or new):
        return f"mem0 memory deleted: {old or new}"[:MAX_MESSAGE_CHARS]
    return None  # NONE events and empty entries say nothing


def _mem0_time(raw: object, path: str) -> datetime:
    try:
        at = datetime.fromisoformat(str(raw))
    except ValueError:
        raise ConversionError(path, "must be an ISO 8601 time") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
