"""What the local Supermemory server stores, and how each object looks on the v5 wire."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

JsonObject = dict[str, Any]
Vector = npt.NDArray[np.float32]


def iso(moment: datetime) -> str:
    """The spec's date-time pattern: UTC with a trailing Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(slots=True)
class Chunk:
    id: str
    document_id: str
    position: int
    content: str
    created_at: datetime
    vector: Vector


@dataclass(slots=True)
class Memory:
    """One fact of the graph. Edges point from this memory to the memories it relates to."""

    id: str
    text: str
    slot: str | None  # engine-internal, never on the wire (v5 exposes no slot)
    document_id: str
    metadata: JsonObject
    created_at: datetime
    updated_at: datetime
    vector: Vector
    version: int = 1
    is_inference: bool = False
    is_latest: bool = True
    is_forgotten: bool = False
    updates: str | None = None  # the previous version this memory supersedes
    extends: tuple[str, ...] = ()
    derives: tuple[str, ...] = ()

    def wire(self) -> JsonObject:
        return {
            "id": self.id,
            "memory": self.text,
            "metadata": dict(self.metadata),
            "isStatic": False,
            "isInference": self.is_inference,
            "isLatest": self.is_latest,
            "isForgotten": self.is_forgotten,
            "version": self.version,
            "system": {"createdAt": iso(self.created_at), "updatedAt": iso(self.updated_at)},
        }


@dataclass(slots=True)
class Document:
    """A document and its two state machines: `status` (chunks) and `dreaming_status` (memories)."""

    id: str
    caller_id: str | None
    content: str
    metadata: JsonObject
    date: str | None
    task_type: str
    dreaming: str
    created_at: datetime
    updated_at: datetime
    ready_at: float  # monotonic time when chunks become searchable
    dream_at: float  # monotonic time when memories form
    queued_at: float = 0.0  # monotonic time processing (re)started
    visible_at: float = 0.0  # GET by id answers 404 before this (read-after-write lag)
    status: str = "queued"
    dreaming_status: str = "dreaming"
    pending: str = ""  # content not yet mined for memories (an append re-processes only this)
    chunk_ids: list[str] = field(default_factory=list)
    memory_ids: list[str] = field(default_factory=list)
    seq: int = 0

    def wire(self, *, content: bool = True) -> JsonObject:
        return {
            "id": self.id,
            "title": None,
            "type": "text",
            "summary": None,
            "content": self.content if content else None,
            "metadata": dict(self.metadata),
            "system": {
                "status": self.status,
                "dreamingStatus": self.dreaming_status,
                "createdAt": iso(self.created_at),
                "updatedAt": iso(self.updated_at),
            },
        }

    def included_wire(self) -> JsonObject:
        """The short form attached to memories and search results (`included.document`)."""
        return {
            "id": self.id,
            "title": None,
            "type": "text",
            "metadata": dict(self.metadata),
            "summary": None,
            "system": {"createdAt": iso(self.created_at), "updatedAt": iso(self.updated_at)},
        }


@dataclass(slots=True)
class NamespaceState:
    documents: dict[str, Document] = field(default_factory=dict)
    by_caller_id: dict[str, str] = field(default_factory=dict)
    chunks: dict[str, Chunk] = field(default_factory=dict)
    memories: dict[str, Memory] = field(default_factory=dict)
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def document(self, any_id: str) -> Document | None:
        """By server id or by caller id, as the API accepts either."""
        server_id = self.by_caller_id.get(any_id, any_id)
        return self.documents.get(server_id)

    def current_memories(self) -> list[Memory]:
        return [m for m in self.memories.values() if m.is_latest and not m.is_forgotten]


def chunk_text(content: str, *, size: int = 1200) -> list[str]:
    """Splits on line boundaries into pieces of at most about `size` characters."""
    pieces: list[str] = []
    current: list[str] = []
    length = 0
    for line in content.splitlines(keepends=True):
        if current and length + len(line) > size:
            pieces.append("".join(current))
            current, length = [], 0
        current.append(line)
        length += len(line)
    if current:
        pieces.append("".join(current))
    return [piece for piece in pieces if piece.strip()] or [content]
