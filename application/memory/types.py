"""Value types that cross the memory port: requests, hits, memories, filters and statuses."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import NewType

import numpy as np
import numpy.typing as npt

from factledger.application.errors import InvalidMemoryInputError

Namespace = NewType("Namespace", str)
MetadataValue = str | int | float | bool | tuple[str, ...]
Metadata = Mapping[str, MetadataValue]

NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9_:-]{1,100}$")
METADATA_KEY_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
MAX_LIMIT = 100


def namespace(value: str) -> Namespace:
    """Validates a namespace; it is derived from a subject id, never from user text."""
    if not NAMESPACE_PATTERN.fullmatch(value):
        raise InvalidMemoryInputError("namespace", "must match ^[A-Za-z0-9_:-]{1,100}$")
    return Namespace(value)


class IngestMode(StrEnum):
    INSTANT = "instant"
    BATCHED = "batched"


class ProcessingState(StrEnum):
    QUEUED = "queued"
    EXTRACTING = "extracting"
    INDEXING = "indexing"
    DONE = "done"
    FAILED = "failed"


class SearchMode(StrEnum):
    MEMORIES = "memories"
    CHUNKS = "chunks"
    HYBRID = "hybrid"


class Capability(StrEnum):
    """What a backend's memories carry beyond text; a backend without one leaves it empty.

    The contract suite checks the real behaviour where a capability is declared and an empty
    field (None or ()) where it is not, so a backend can neither lie nor guess.
    """

    FACT_SLOTS = "fact_slots"  # MemoryFact.slot: the profile slot a fact is about
    FACT_CONDITIONS = "fact_conditions"  # MemoryFact.condition, kept verbatim
    FACT_PROVENANCE = "fact_provenance"  # source_indexes: the transcript messages of a fact


ALL_CAPABILITIES: frozenset[Capability] = frozenset(Capability)


class HitKind(StrEnum):
    MEMORY = "memory"
    CHUNK = "chunk"


class RelationKind(StrEnum):
    """How one fact relates to another, after Supermemory's memory graph."""

    UPDATES = "updates"  # the new fact supersedes the old; the old stays with is_latest=False
    EXTENDS = "extends"  # adds context; both stay current
    DERIVES = "derives"  # a conclusion nobody stated; the new fact is an inference


class FilterOp(StrEnum):
    EQ = "eq"
    NEQ = "neq"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"
    IN = "in"  # the metadata value is one of the given values
    ARRAY_CONTAINS = "array_contains"  # the metadata list holds the given value


@dataclass(frozen=True, slots=True)
class Condition:
    key: str
    op: FilterOp
    value: MetadataValue


@dataclass(frozen=True, slots=True)
class AllOf:
    operands: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    operands: tuple[Filter, ...]


Filter = Condition | AllOf | AnyOf


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """What to look for in one namespace; defaults are the product's recall defaults."""

    text: str
    mode: SearchMode = SearchMode.MEMORIES
    threshold: float = 0.55
    limit: int = 3
    filters: Filter | None = None
    include_inferred: bool = False
    include_superseded: bool = False
    include_forgotten: bool = False
    # The topic the text asks about (a slot name, "supplier"), read by meaning where the
    # product composes a reader (`application.memory.topics`); its name joins the keywords.
    asked_about: str | None = None
    # The text's vector where a layer above the backend embedded it already (the reader
    # above); the backend embeds the text itself unless it is this text's by its embedder
    # (`query_vector.query_vector`). Not part of what the query asks: left out of equality.
    vector: QueryVector | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True, eq=False)
class QueryVector:
    """The vector of `text` by `embedder` (compared by identity: the very object a backend
    embeds with, so a vector of another model or setting is never searched with)."""

    text: str
    embedder: object
    values: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Relation:
    kind: RelationKind
    memory_id: str


@dataclass(frozen=True, slots=True)
class SearchHit:
    id: str
    text: str
    score: float
    kind: HitKind
    is_latest: bool
    is_inference: bool
    occurred_at: datetime | None
    document_id: str | None
    relations: tuple[Relation, ...] = ()
    is_forgotten: bool = False
    metadata: Metadata = field(default_factory=dict)
    source_indexes: tuple[int, ...] = ()  # message indexes of the transcript a fact came from


@dataclass(frozen=True, slots=True)
class MemoryFact:
    """One fact of the memory graph, with its place in the history of its slot."""

    id: str
    text: str
    slot: str | None
    is_latest: bool
    is_inference: bool
    is_forgotten: bool
    occurred_at: datetime | None
    document_id: str | None
    version: int = 1
    relations: tuple[Relation, ...] = ()
    condition: str | None = None
    forget_reason: str | None = None
    expires_at: datetime | None = None
    source_indexes: tuple[int, ...] = ()
    metadata: Metadata = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """One of our own records, returned byte for byte as it was written."""

    record_id: str
    kind: str
    body_json: str
    metadata: Metadata = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ProcessingStatus:
    document_id: str
    state: ProcessingState
    facts: int = 0
    error_type: str | None = None


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """Ids acted on (forgotten memories, or deleted records) and ids not found."""

    forgotten: tuple[str, ...]
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BackendHealth:
    ok: bool
    backend: str
    detail: str = ""
