"""`TurnSource`s: the ledger's side of a turn from one read of the subject, or, where the
read side has no such read (fixed sources, a ledger without forgets), from its two ports.

A turn runs these beside its search on every request, and on a busy process each hand-off
to a worker thread is a wait for the CPU of its own; reading the subject aggregate once
for both the confirmed profile and the forget mask halves those hand-offs and cache lookups.
"""

from __future__ import annotations

import asyncio
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from factledger.application.clocks import Clock
from factledger.application.ledger.in_place import read_in_place
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.forget_filter import NOTHING_FORGOTTEN
from factledger.application.recall.ledger_forget_source import LedgerForgets
from factledger.application.recall.ledger_sources import confirmed_entries, open_entries
from factledger.application.recall.ports import (
    ForgetSource,
    RecallSources,
    TurnLedger,
    TurnSource,
)
from factledger.domain.subject import Subject

NOTHING_KNOWN = TurnLedger(profile=(), mask=NOTHING_FORGOTTEN)


class LedgerTurns:
    """`TurnSource` over the ledger: one aggregate read (the library's cache, fast-forwarded)
    in one worker thread gives the profile (fields past `valid_until` by `clock` left out),
    the mask (`LedgerForgets`, which keeps masks per subject and version), the subject's
    kind and its pending changes."""

    def __init__(
        self, ledger: Ledger, forgets: LedgerForgets, *, clock: Clock | None = None
    ) -> None:
        self._ledger = ledger
        self._forgets = forgets
        self._clock = clock or ledger.clock

    async def turn(self, subject_id: UUID) -> TurnLedger:
        return await asyncio.to_thread(self.turn_now, subject_id)

    def turn_now(self, subject_id: UUID) -> TurnLedger:
        """`turn`, blocking."""
        now = self._clock.now()

        def read(subject: Subject) -> TurnLedger:
            return TurnLedger(
                profile=confirmed_entries(subject, now),
                mask=self._forgets.mask_of_read(subject),
                kind=subject.kind,
                pending=open_entries(subject),
            )

        try:
            # A turn only reads the subject into values of its own: no copy (`in_place`).
            return read_in_place(self._ledger.repository, subject_id, read)
        except AggregateNotFoundError:
            return NOTHING_KNOWN


class SeparateReads:
    """`TurnSource` from recall's two ports, read concurrently; with no forget source the
    mask is empty and costs nothing."""

    def __init__(self, sources: RecallSources, forgets: ForgetSource | None) -> None:
        self._sources = sources
        self._forgets = forgets

    async def turn(self, subject_id: UUID) -> TurnLedger:
        if self._forgets is None:
            return TurnLedger(await self._sources.confirmed_profile(subject_id), NOTHING_FORGOTTEN)
        profile, mask = await asyncio.gather(
            self._sources.confirmed_profile(subject_id), self._forgets.mask(subject_id)
        )
        return TurnLedger(profile, mask)


def turn_source(
    sources: RecallSources, forgets: ForgetSource | None, turns: TurnSource | None
) -> TurnSource:
    """The turn read recall uses: the combined one when given, else its two ports'."""
    return turns if turns is not None else SeparateReads(sources, forgets)
