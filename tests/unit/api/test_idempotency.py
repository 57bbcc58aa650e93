"""The idempotency store: first result kept, replays, reuse with another request, in-flight
twins, failures freeing the key, scoping, expiry and the size bound."""

from __future__ import annotations

import pytest

from factledger.api.errors import (
    IdempotencyKeyReusedError,
    InvalidParameterError,
    RequestInProgressError,
)
from factledger.api.idempotency import InMemoryIdempotencyStore, parse_key

SCOPE = ("t1", "agent-1", "key-00000001")


def test_the_first_request_runs_and_its_twin_gets_the_result() -> None:
    store = InMemoryIdempotencyStore()
    assert store.begin(SCOPE, "fp") is None
    store.complete(SCOPE, "fp", {"ok": 1})
    assert store.begin(SCOPE, "fp") == {"ok": 1}


def test_a_key_reused_for_another_request_is_refused() -> None:
    store = InMemoryIdempotencyStore()
    store.begin(SCOPE, "fp")
    store.complete(SCOPE, "fp", {"ok": 1})
    with pytest.raises(IdempotencyKeyReusedError):
        store.begin(SCOPE, "other")


def test_a_twin_of_a_running_request_is_told_to_retry() -> None:
    store = InMemoryIdempotencyStore()
    store.begin(SCOPE, "fp")
    with pytest.raises(RequestInProgressError):
        store.begin(SCOPE, "fp")
    store.abandon(SCOPE)
    assert store.begin(SCOPE, "fp") is None


def test_keys_are_scoped_by_tenant_and_principal() -> None:
    store = InMemoryIdempotencyStore()
    store.begin(SCOPE, "fp")
    store.complete(SCOPE, "fp", {"ok": 1})
    assert store.begin(("t2", "agent-1", SCOPE[2]), "fp") is None
    assert store.begin(("t1", "agent-2", SCOPE[2]), "fp") is None


def test_results_expire_and_the_store_stays_bounded() -> None:
    expired = InMemoryIdempotencyStore(ttl_s=0)
    expired.begin(SCOPE, "fp")
    expired.complete(SCOPE, "fp", {"ok": 1})
    assert expired.begin(SCOPE, "fp") is None
    small = InMemoryIdempotencyStore(max_entries=2)
    for n in range(3):
        scope = ("t1", "a", f"key-{n:08d}")
        small.begin(scope, "fp")
        small.complete(scope, "fp", {"n": n})
    assert small.begin(("t1", "a", "key-00000000"), "fp") is None  # evicted, runs again
    assert small.begin(("t1", "a", "key-00000002"), "fp") == {"n": 2}


def test_keys_must_be_plain_and_bounded() -> None:
    assert parse_key(None) is None
    assert parse_key("abc-123_x:9") == "abc-123_x:9"
    for bad in ("short", "x" * 129, "has space in it", "semi;colon-key"):
        with pytest.raises(InvalidParameterError):
            parse_key(bad)
