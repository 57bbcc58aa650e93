"""What a page applied behind another reads: the page in flight's last state of each document
over what the database holds."""

from __future__ import annotations

from factledger.adapters.postgres.view_write_behind import (
    carried,
    reading_through_one,
    reading_through_prefix,
)
from factledger.adapters.view_buffer import Writes

STORED = {("change", "s1:a"): '{"n": 1}', ("change", "s1:b"): '{"n": 2}', ("queue", "q"): "{}"}


def load_one(view: str, key: str) -> str | None:
    return STORED.get((view, key))


def load_prefix(view: str, prefix: str) -> list[tuple[str, str]]:
    return sorted((k, t) for (v, k), t in STORED.items() if v == view and k.startswith(prefix))


IN_FLIGHT = Writes(
    puts=[("change", "s1:b", '{"n": 3}'), ("change", "s1:c", '{"n": 4}'), ("change", "s2:a", "{}")],
    deletes=[("change", "s1:a"), ("queue", "q")],
)


def test_a_document_the_page_in_flight_wrote_reads_as_it_left_it() -> None:
    load = reading_through_one(load_one, carried(IN_FLIGHT))
    assert load("change", "s1:b") == '{"n": 3}'
    assert load("change", "s1:c") == '{"n": 4}'


def test_a_document_the_page_in_flight_deleted_reads_as_absent() -> None:
    load = reading_through_one(load_one, carried(IN_FLIGHT))
    assert load("change", "s1:a") is None
    assert load("queue", "q") is None


def test_a_document_the_page_in_flight_left_alone_reads_from_the_database() -> None:
    load = reading_through_one(load_one, carried(Writes()))
    assert load("change", "s1:a") == '{"n": 1}'
    assert load("change", "s9:z") is None


def test_a_scan_merges_the_page_in_flight_in_key_order_within_its_view_and_prefix() -> None:
    scan = reading_through_prefix(load_prefix, carried(IN_FLIGHT))
    assert scan("change", "s1:") == [("s1:b", '{"n": 3}'), ("s1:c", '{"n": 4}')]
    assert scan("change", "") == [("s1:b", '{"n": 3}'), ("s1:c", '{"n": 4}'), ("s2:a", "{}")]
    assert scan("queue", "") == []
    assert scan("history", "") == []
