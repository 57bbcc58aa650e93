"""What both integrations share: what a recalled note tells about its provenance, and the
message a missing framework raises."""

from __future__ import annotations

from typing import Any

from factledger.client.models import Excerpt, Note


def missing(framework: str, extra: str) -> str:
    return f"{framework} is not installed: pip install 'factledger[{extra}]'"


def note_metadata(note: Note) -> dict[str, Any]:
    """Where a note comes from (session, channel, date) and what it is, as plain JSON values
    (frameworks copy metadata into prompts, stores and traces)."""
    metadata: dict[str, Any] = {
        "source": "factledger",
        "kind": note.kind,
        "ref": note.ref,
        "inferred": note.inferred,
    }
    optional = {
        "session_id": note.session_id,
        "channel": note.channel,
        "on": None if note.on is None else note.on.isoformat(),
        "score": note.score,
        "question": note.question,
    }
    metadata.update({key: value for key, value in optional.items() if value is not None})
    return metadata


def excerpt_metadata(excerpt: Excerpt) -> dict[str, Any]:
    """An excerpt's attribution: who said it, in which session and message, when."""
    metadata: dict[str, Any] = {
        "source": "factledger",
        "kind": "excerpt",
        "role": excerpt.role,
        "session_id": excerpt.session_id,
        "message_index": excerpt.message_index,
    }
    if excerpt.on is not None:
        metadata["on"] = excerpt.on.isoformat()
    if excerpt.channel is not None:
        metadata["channel"] = excerpt.channel
    return metadata
