"""What an extractor is given and what it returns: facts with provenance and relations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message


@dataclass(frozen=True, slots=True)
class KnownFact:
    """A current fact the namespace already holds, so new facts can be linked to it."""

    memory_id: str
    text: str
    slot: str | None


# Keys of a transcript's backend metadata that carry its extraction context, so a backend
# that extracts later (a queued ingest, a remote engine) still knows which guidance applies.
CONTEXT_KEYS = ("tenant", "subject_kind", "channel", "conversation_type")


@dataclass(frozen=True, slots=True)
class ExtractionContext:
    """Where a transcript comes from: what extraction guidance is chosen by.

    Every part is optional: a context that names nothing gets the default guidance.
    """

    tenant: str | None = None
    subject_kind: str | None = None
    channel: str | None = None
    conversation_type: str | None = None

    def to_metadata(self) -> dict[str, str]:
        """The parts that are set, under `CONTEXT_KEYS`, for a transcript's metadata."""
        return {k: v for k in CONTEXT_KEYS if (v := getattr(self, k)) is not None}

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, object]) -> ExtractionContext:
        """The context a transcript's metadata carries; keys that are absent or not text
        stay None."""
        parts = {k: v for k in CONTEXT_KEYS if isinstance(v := metadata.get(k), str)}
        return cls(**parts)


NO_CONTEXT = ExtractionContext()


@dataclass(frozen=True, slots=True)
class FieldSlot:
    """A profile field the caller proposes for, and the extractor slot that feeds it."""

    field: str
    slot: str
    many: bool = False  # a list field: every value stated, not only the last
    # The subject holds a statement of this field already (the profile's value, or a pending
    # or superseded change): a session stating it again is where an update is said (ADR 0128).
    held: bool = False
    # The words it holds (the profile's value, else its latest standing statement's), for a
    # reader that compares a line with them (ADR 0137); None: not known.
    held_value: str | None = None


@dataclass(frozen=True, slots=True)
class ExtractionRequest:
    """A transcript to read; `fields`, when the proposer gives them, are the subject kind's
    profile fields, for an extractor that finds fields by meaning rather than by its slots."""

    transcript: Sequence[Message]
    occurred_at: datetime
    known: Sequence[KnownFact] = ()
    context: ExtractionContext = NO_CONTEXT
    fields: Sequence[FieldSlot] = ()


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """One fact found in a transcript.

    - `key` is local to one extraction ("f0", "f1", ...); relations name either a local key or
      the memory id of a known fact.
    - `relation` UPDATES means "supersedes the current fact of my slot" (the backend resolves
      the target under its own lock, so concurrent ingests keep one current fact per slot);
      EXTENDS and DERIVES name their targets in `related_to`.
    - `is_inference` is True for conclusions nobody stated (always so for DERIVES).
    - `condition` keeps a hedge or condition verbatim ("if the pricing works").
    - `source_indexes` are the indexes of the transcript messages the fact came from.
    - `value` is the slot's value as said ("Supplier B"), when the extractor isolates it;
      None means only `text` says it.
    - `negated` says the value no longer holds ("no longer works with Supplier A"): the fact
      updates its slot but states no new value.
    - `topic` is what an unslotted fact speaks of ("pet", "hobby"), read by meaning, and
      `asked_with` the words questions about its topic or slot use, fitted with the reader
      (`application.memory.topics`): both join the fact's keywords only.
    - `read_back` is the index of the agent's line that said the value when the subject's
      next line (the last of `source_indexes`) confirmed it (ADR 0138); None otherwise.
    """

    key: str
    text: str
    slot: str | None
    source_indexes: tuple[int, ...]
    relation: RelationKind | None = None
    related_to: tuple[str, ...] = ()
    is_inference: bool = False
    condition: str | None = None
    valid_from: datetime | None = None
    value: str | None = None
    negated: bool = False
    topic: str | None = None
    asked_with: str | None = None
    read_back: int | None = None
