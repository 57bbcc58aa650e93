"""Contract: deleting records is erasure: gone from reads and every search mode, idempotent,
and confined to its namespace."""

from __future__ import annotations

import pytest

from factledger.application.errors import InvalidMemoryInputError, MemoryNotFoundError
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Namespace, SearchMode, SearchQuery

NS = Namespace("subject-erasure")
OTHER = Namespace("subject-erasure-other")
SECRET = '{"fields": {"diagnosis": {"text": "lactose intolerance confirmed"}}}'
KEPT = '{"fields": {"city": {"text": "lives in Porto near the river"}}}'


def query(text: str, mode: SearchMode) -> SearchQuery:
    return SearchQuery(text=text, mode=mode, threshold=0.0, limit=10)


async def test_a_deleted_record_is_gone_from_reads_and_searches(backend: MemoryBackend) -> None:
    await backend.put_record(NS, "profile.v1", "profile_version", SECRET)
    await backend.put_record(NS, "profile.v2", "profile_version", KEPT)

    result = await backend.delete_records(NS, ["profile.v1"])

    assert result.forgotten == ("profile.v1",)
    assert result.missing == ()
    with pytest.raises(MemoryNotFoundError):
        await backend.get_record(NS, "profile.v1")
    for mode in (SearchMode.CHUNKS, SearchMode.HYBRID):
        hits = await backend.search(NS, query("lactose intolerance diagnosis", mode))
        assert all("lactose" not in h.text for h in hits), mode
        assert "profile.v1" not in {h.document_id for h in hits}, mode
    assert (await backend.get_record(NS, "profile.v2")).body_json == KEPT
    kept = await backend.search(NS, query("lives in Porto", SearchMode.CHUNKS))
    assert [h.document_id for h in kept] == ["profile.v2"]


async def test_deleting_twice_reports_the_ids_missing(backend: MemoryBackend) -> None:
    await backend.put_record(NS, "proposal.a", "change_proposed", SECRET)

    first = await backend.delete_records(NS, ["proposal.a", "proposal.never"])
    second = await backend.delete_records(NS, ["proposal.a"])

    assert first.forgotten == ("proposal.a",)
    assert first.missing == ("proposal.never",)
    assert second.forgotten == ()
    assert second.missing == ("proposal.a",)


async def test_deleting_in_an_unknown_namespace_or_nothing_is_fine(
    backend: MemoryBackend,
) -> None:
    nothing = await backend.delete_records(NS, [])
    unknown = await backend.delete_records(Namespace("subject-never-used"), ["profile.v1"])

    assert (nothing.forgotten, nothing.missing) == ((), ())
    assert (unknown.forgotten, unknown.missing) == ((), ("profile.v1",))


async def test_deleting_never_touches_another_namespace(backend: MemoryBackend) -> None:
    await backend.put_record(NS, "profile.v1", "profile_version", SECRET)
    await backend.put_record(OTHER, "profile.v1", "profile_version", SECRET)

    await backend.delete_records(NS, ["profile.v1"])

    assert (await backend.get_record(OTHER, "profile.v1")).body_json == SECRET
    hits = await backend.search(OTHER, query("lactose intolerance", SearchMode.CHUNKS))
    assert [h.document_id for h in hits] == ["profile.v1"]


async def test_a_deleted_id_can_be_written_again_with_another_body(
    backend: MemoryBackend,
) -> None:
    # Erasure leaves no tombstone that would make a later, different record a conflict.
    await backend.put_record(NS, "summary.x", "session_summary", SECRET)
    await backend.delete_records(NS, ["summary.x"])

    await backend.put_record(NS, "summary.x", "session_summary", KEPT)

    assert (await backend.get_record(NS, "summary.x")).body_json == KEPT


async def test_an_invalid_record_id_is_rejected(backend: MemoryBackend) -> None:
    with pytest.raises(InvalidMemoryInputError):
        await backend.delete_records(NS, ["bad id with spaces"])
