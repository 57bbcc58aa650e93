"""A turn reads the ledger once: the confirmed profile and the forgets come from one
`TurnSource` call beside the search, never from the separate ports as well."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from factledger.application.recall.forget_filter import NOTHING_FORGOTTEN, ForgetMask
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.ports import TurnLedger
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.sources import ProfileEntry
from factledger.application.recall.types import Degraded, NoteKind
from tests.unit.application.recall.test_recall import (
    MAR,
    SUBJECT,
    FixedSources,
    seeded_backend,
)

POLICY = RecallPolicy(threshold=0.3)
SUPPLIER = ProfileEntry("supplier", "Supplier B", None, False, MAR, "call-mar")


class CountingTurns:
    """A `TurnSource` with fixed data that counts its reads (or fails them)."""

    def __init__(self, *, profile: Sequence[ProfileEntry] = (), fail: bool = False) -> None:
        self.profile, self.fail, self.reads = profile, fail, 0

    async def turn(self, subject_id: uuid.UUID) -> TurnLedger:
        self.reads += 1
        if self.fail:
            raise RuntimeError("ledger down")
        return TurnLedger(self.profile, NOTHING_FORGOTTEN)


class RefusingSources(FixedSources):
    """Read side whose profile must not be read on a turn (the turn source gives it)."""

    async def confirmed_profile(self, subject_id: uuid.UUID) -> Sequence[ProfileEntry]:
        raise AssertionError("the profile was read a second time")


class RefusingForgets:
    async def mask(self, subject_id: uuid.UUID) -> ForgetMask:
        raise AssertionError("the forgets were read a second time")


async def test_a_turn_reads_the_ledger_once_for_profile_and_forgets() -> None:
    turns = CountingTurns(profile=[SUPPLIER])
    ports = RecallPorts(
        await seeded_backend(),
        RefusingSources(),
        RecallPolicies(default=POLICY),
        forgets=RefusingForgets(),
        turns=turns,
    )
    result = await Recall(ports).recall(SUBJECT, "works with supplier")
    assert result.degraded is None
    assert turns.reads == 1
    # The confirmed field read in that one call still puts the agreeing memory first.
    assert result.notes[0].text == "works with Supplier B, previously Supplier A"
    assert result.notes[0].origin.kind is NoteKind.MEMORY


async def test_a_failed_turn_read_is_the_ledgers_error_and_serves_nothing_unmasked() -> None:
    turns = CountingTurns(fail=True)
    ports = RecallPorts(
        await seeded_backend(), FixedSources(), RecallPolicies(default=POLICY), turns=turns
    )
    result = await Recall(ports).recall(SUBJECT, "works with supplier")
    assert result.degraded is Degraded.SOURCE_ERROR
    assert result.notes == ()
