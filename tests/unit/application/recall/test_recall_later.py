"""The asked field's later statement under the search's threshold takes the place of its
earlier pending value (`recall.later`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from factledger.application.memory.types import HitKind, QueryVector, SearchHit
from factledger.application.recall.later import split_under
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.application.recall.types import NoteKind
from factledger.domain.provenance import Operation
from tests.unit.application.recall.test_recall import JAN, SUBJECT, FixedSources, seeded_backend
from tests.unit.application.recall.test_recall_asked_field import Asks, Turns, pending

# Every memory of the seeded subject scores under the threshold for this question: only the
# rows under it hold March's "works with Supplier B", said after January's pending "Supplier A".
POLICY = RecallPolicy(threshold=0.3)
UNMATCHED = "which vendor do they buy from"
EARLIER = replace(pending("supplier", "Supplier A", 0), said_at=JAN - timedelta(days=1))


async def recall(asks: Asks) -> Recall:
    ports = RecallPorts(
        await seeded_backend(),
        FixedSources(),
        RecallPolicies(default=POLICY),
        turns=Turns("lead", open_changes=[EARLIER]),
        asked_fields=asks,
    )
    return Recall(ports)


async def test_a_later_memory_read_as_the_asked_field_takes_the_pending_values_place() -> None:
    # The asked field the memory's most probable field, or the second.
    for ranked in (["supplier"], ["budget", "supplier"]):
        result = await (await recall(Asks("lead", "supplier", ranked))).recall(SUBJECT, UNMATCHED)
        assert [n.origin.kind for n in result.notes] == [NoteKind.MEMORY]
        assert result.notes[0].text.startswith("works with Supplier B")


async def test_a_later_memory_read_as_another_field_leaves_the_pending_value() -> None:
    for asks in (
        Asks("lead", "supplier", ["budget", "team_size", "supplier"]),
        Asks("lead", "supplier"),
    ):
        result = await (await recall(asks)).recall(SUBJECT, UNMATCHED)
        assert [n.origin.ref for n in result.notes] == [str(EARLIER.change_id)]


async def test_a_guessed_field_a_list_field_or_a_later_pending_value_keeps_its_place() -> None:
    # Sure of no field, the heads' guess (the most probable held field) withholds nothing.
    unsure = Asks("lead", None, ["supplier"])
    result = await (await recall(unsure)).recall(SUBJECT, UNMATCHED)
    assert [n.origin.ref for n in result.notes] == [str(EARLIER.change_id)]
    kept = {
        "a list field's item": replace(EARLIER, operation=Operation.APPEND),
        "said after the memory": replace(EARLIER, said_at=JAN + timedelta(days=90)),
    }
    for why, change in kept.items():
        ports = RecallPorts(
            await seeded_backend(),
            FixedSources(),
            RecallPolicies(default=POLICY),
            turns=Turns("lead", open_changes=[change]),
            asked_fields=Asks("lead", "supplier", ["supplier"]),
        )
        result = await Recall(ports).recall(SUBJECT, UNMATCHED)
        assert [n.origin.ref for n in result.notes] == [str(change.change_id)], why


def test_the_rows_over_the_threshold_are_the_narrower_searchs_rows() -> None:
    def hit(n: int, score: float) -> SearchHit:
        return SearchHit(f"m{n}", "t", score, HitKind.MEMORY, True, False, JAN, None)

    rows = [hit(0, 0.9), hit(1, 0.7), hit(2, 0.6), hit(3, 0.4), hit(4, 0.1)]
    above, under = split_under(rows, 0.55, 2)
    assert [h.id for h in above] == ["m0", "m1"]
    assert [h.id for h in under] == ["m3", "m4"]


class LaterRowsUnreadable(Asks):
    """Reads the question; fails on every other text (the rows under the threshold)."""

    async def query_vector(self, text: str) -> QueryVector | None:
        if text != UNMATCHED:
            raise RuntimeError("the heads' model failed")
        return await super().query_vector(text)


async def test_a_later_statement_that_cannot_be_read_leaves_the_turn_as_it_was() -> None:
    result = await (await recall(LaterRowsUnreadable("lead", "supplier", ["supplier"]))).recall(
        SUBJECT, UNMATCHED
    )
    assert result.degraded is None
    assert [n.origin.ref for n in result.notes] == [str(EARLIER.change_id)]
