"""Ports of recall: the ledger's read side and its forgets, as recall needs them; the
composition root gives it the ledger's (`ledger_sources`, `ledger_forget_source`).

Recall depends on these small ports rather than on the ledger's projections directly, so it
can be tested with fixed data and served from whichever read model is cheapest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from factledger.application.memory.types import QueryVector
from factledger.application.recall.forget_filter import ForgetMask
from factledger.application.recall.sources import OpenProposal, ProfileEntry, SessionDigest
from factledger.domain.transcript import Message


class RecallSources(Protocol):
    """Read-only views of one subject's ledger.

    - `confirmed_profile` never returns unconfirmed proposals, nor a field whose
      `valid_until` has passed by the sources' `Clock` (an expired field stays in the
      profile and its history; it is only no longer served).
    - `recent_sessions` is newest first; `sessions` looks sessions up by id (unknown ids are
      left out) and `transcript` returns a session's messages in order (empty when unknown).
    """

    async def confirmed_profile(self, subject_id: UUID) -> Sequence[ProfileEntry]: ...

    async def recent_sessions(self, subject_id: UUID, *, limit: int) -> Sequence[SessionDigest]: ...

    async def open_proposals(self, subject_id: UUID, *, limit: int) -> Sequence[OpenProposal]: ...

    async def sessions(
        self, subject_id: UUID, session_ids: Sequence[str]
    ) -> Mapping[str, SessionDigest]: ...

    async def transcript(self, subject_id: UUID, session_id: str) -> Sequence[Message]: ...


class ForgetSource(Protocol):
    """The ledger's forgets of one subject; cheap, since recall reads it on every turn."""

    async def mask(self, subject_id: UUID) -> ForgetMask: ...


@dataclass(frozen=True, slots=True)
class TurnLedger:
    """What a turn reads from the ledger beside its search: the confirmed profile (to put the
    decided facts first), the forgets (to drop what may no longer be served) and, where the
    read has them, the subject's kind and its pending changes (to offer the values of the
    field a question asks about, `recall.asked`)."""

    profile: Sequence[ProfileEntry]
    mask: ForgetMask
    kind: str | None = None
    pending: Sequence[OpenProposal] = ()


class AskedFields(Protocol):
    """Which profile field of a subject kind a question asks about, when sure (None: no
    field, or a kind it does not know), read from the question's vector: `query_vector`
    embeds it once, the search takes that vector as its own, and `field_of` reads it.
    `ranked_fields`: the kind's fields, the most probable first, however unsure (empty for a
    kind or vector it cannot read)."""

    async def query_vector(self, text: str) -> QueryVector | None: ...

    def field_of(self, kind: str, vector: QueryVector) -> str | None: ...

    def ranked_fields(self, kind: str, vector: QueryVector) -> Sequence[str]: ...


class MemoryStatements(Protocol):
    """Whom memory texts speak of, by a learned reader (`recall.others`, ADR 0154):
    `third_parties` returns, for each text in order, whether it most probably states a third
    party's fact rather than the subject's own. Deterministic for a given model; no network."""

    async def third_parties(self, texts: Sequence[str]) -> list[bool]: ...


class TurnSource(Protocol):
    """The ledger's side of one turn, read once: on every turn, beside the search, so one
    read of the subject (one hand-off to a worker thread) rather than one per part."""

    async def turn(self, subject_id: UUID) -> TurnLedger: ...
