"""Translations between the memory port's types and Supermemory v5 wire shapes.

Provenance travels in document metadata under reserved `fl_` keys, because v5 derives every
memory's metadata from its document's and echoes no caller id: `fl_kind` (transcript, record,
expiry, forget), `fl_id` (our document or record id), `fl_record_kind`, `fl_occurred_at`.
Callers' own keys may not start with `fl_`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from factledger.application.errors import InvalidMemoryInputError
from factledger.application.memory.types import (
    AllOf,
    AnyOf,
    Condition,
    Filter,
    FilterOp,
    HitKind,
    MemoryFact,
    Metadata,
    MetadataValue,
    ProcessingState,
    Relation,
    RelationKind,
)
from factledger.domain.transcript import Message

RESERVED_PREFIX = "fl_"
KIND = "fl_kind"
OUR_ID = "fl_id"
RECORD_KIND = "fl_record_kind"
OCCURRED_AT = "fl_occurred_at"
KIND_TRANSCRIPT = "transcript"
KIND_RECORD = "record"
KIND_EXPIRY = "expiry"
KIND_FORGET = "forget"
INTERNAL_KINDS = frozenset({KIND_EXPIRY, KIND_FORGET})
TRANSCRIPT_PREFIX = "tr-"
RECORD_PREFIX = "rec-"

STATE_BY_STATUS = {
    "unknown": ProcessingState.QUEUED,
    "queued": ProcessingState.QUEUED,
    "extracting": ProcessingState.EXTRACTING,
    "chunking": ProcessingState.EXTRACTING,
    "embedding": ProcessingState.INDEXING,
    "indexing": ProcessingState.INDEXING,
    "done": ProcessingState.DONE,
    "failed": ProcessingState.FAILED,
}
_OPERATOR = {
    FilterOp.EQ: "eq",
    FilterOp.NEQ: "neq",
    FilterOp.GT: "gt",
    FilterOp.GTE: "gte",
    FilterOp.LT: "lt",
    FilterOp.LTE: "lte",
    FilterOp.ARRAY_CONTAINS: "arrayContains",
}


class UntranslatableFilterError(ValueError):
    """The filter uses something v5 cannot express (a string range); apply it client-side."""


def render_transcript(transcript: Sequence[Message]) -> str:
    """`role: text` lines, continuation lines indented, so speakers stay unambiguous."""
    lines: list[str] = []
    for message in transcript:
        first, *rest = message.text.split("\n")
        lines.append(f"{message.role.value}: {first}")
        lines.extend(f"  {line}" for line in rest)
    return "\n".join(lines)


def wire_metadata(metadata: Mapping[str, MetadataValue], **reserved: str) -> dict[str, Any]:
    for key in metadata:
        if key.startswith(RESERVED_PREFIX):
            raise InvalidMemoryInputError(
                "metadata", f"keys starting with {RESERVED_PREFIX} are reserved"
            )
    wire: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v for k, v in metadata.items()}
    wire.update({f"{RESERVED_PREFIX}{key}": value for key, value in reserved.items()})
    return wire


def user_metadata(wire: Mapping[str, Any] | None) -> Metadata:
    """The caller's keys only, lists back as tuples."""
    return {
        key: tuple(value) if isinstance(value, list) else value
        for key, value in (wire or {}).items()
        if not key.startswith(RESERVED_PREFIX)
    }


def parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def our_document_id(wire: Mapping[str, Any] | None) -> str | None:
    value = (wire or {}).get(OUR_ID)
    return value if isinstance(value, str) else None


def wire_filter(node: Filter) -> dict[str, Any]:
    """The port's filter in the v5 grammar; `in` becomes an `or` of `eq`s."""
    match node:
        case AllOf(operands=operands):
            return {"operator": "and", "operands": [wire_filter(o) for o in operands]}
        case AnyOf(operands=operands):
            return {"operator": "or", "operands": [wire_filter(o) for o in operands]}
        case Condition(key=key, op=FilterOp.IN, value=value):
            values = value if isinstance(value, tuple) else (value,)
            return {
                "operator": "or",
                "operands": [{"field": key, "operator": "eq", "value": v} for v in values],
            }
        case Condition(key=key, op=op, value=value):
            if op not in (FilterOp.EQ, FilterOp.NEQ, FilterOp.ARRAY_CONTAINS) and not isinstance(
                value, int | float
            ):
                raise UntranslatableFilterError(key)
            return {"field": key, "operator": _OPERATOR[op], "value": value}
    raise InvalidMemoryInputError("filters", "must be a Condition, AllOf or AnyOf")


def relations_of(included: Any, *, version: int | None = None) -> tuple[Relation, ...]:
    """From `included.related`: the nearest `updates` parent, `derives` parents, `extends`.

    Forgotten memories are not listed there, so when the version just before this one is
    forgotten the nearest parent listed is an older one: with the memory's own `version`
    known (its details), that parent is named only when it is that very version, never a
    guess at a link the service did not show."""
    related = getattr(included, "related", None) if included is not None else None
    if related is None:
        return ()
    relations: list[Relation] = []
    parents = list(related.parents or ())
    nearest_update = next((p for p in parents if p.relation == "updates"), None)
    if nearest_update is not None and _directly_before(nearest_update, version):
        relations.append(Relation(RelationKind.UPDATES, nearest_update.id))
    relations += [Relation(RelationKind.DERIVES, p.id) for p in parents if p.relation == "derives"]
    relations += [
        Relation(RelationKind(s.relation), s.id)
        for s in related.siblings or ()
        if s.relation in ("extends", "derives")
    ]
    return tuple(relations)


def version_of(memory: Any) -> int | None:
    """A memory's (or its details') version, when the service gave one."""
    version = getattr(memory, "version", None)
    return None if version is None else int(version)


def _directly_before(parent: Any, version: int | None) -> bool:
    parent_version = getattr(parent, "version", None)
    if version is None or parent_version is None:
        return True  # nothing to check it by (a search result carries no version)
    return int(parent_version) == version - 1


def memory_fact(
    memory: Any,
    *,
    relations: tuple[Relation, ...] = (),
    forget_reason: str | None = None,
    expires_at: datetime | None = None,
    expired: bool = False,
) -> MemoryFact:
    """A v5 `Memory` / `MemoryDetails` as the port's `MemoryFact` (no slot: v5 has none)."""
    metadata = memory.metadata or {}
    forgotten = bool(memory.is_forgotten) or expired
    return MemoryFact(
        id=memory.id,
        text=memory.memory,
        slot=None,
        is_latest=bool(memory.is_latest),
        is_inference=bool(memory.is_inference),
        is_forgotten=forgotten,
        occurred_at=parse_time(metadata.get(OCCURRED_AT)),
        document_id=our_document_id(metadata),
        version=int(memory.version or 1),
        relations=relations,
        forget_reason=forget_reason if forgotten else None,
        expires_at=expires_at,
        metadata=user_metadata(metadata),
    )


def hit_kind(result: Any) -> HitKind:
    # Hybrid and chunk hits put their text in `chunk`; reading one field only drops results.
    return HitKind.MEMORY if result.memory is not None else HitKind.CHUNK
