"""Contract of the `KeyStore` port (`application.ledger.ports`), run over every adapter.

Adapters: in-memory, SQLite and PostgreSQL (integration; each test in its own schema). Each
test can open a second handle on the same keys, as a second process would (the in-memory
adapter's handles are one object). Durability across a close applies to SQLite and PostgreSQL
only: in-memory keys go with their in-memory ledger.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.stores import new_schema

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.sqlite.key_store import SqliteKeyStore
from factledger.application.ledger.cipher import KEY_BYTES
from factledger.application.ledger.ports import KeyStore

SUBJECT = "9d5b0c1e-4a51-4f3e-9a55-1f0d0c7a1e01"
OTHER_SUBJECT = "9d5b0c1e-4a51-4f3e-9a55-1f0d0c7a1e02"
FIELD = f"{SUBJECT}/supplier"

DURABLE = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.integration),
]
ADAPTERS = [pytest.param("in_memory", id="in-memory"), *DURABLE]


@dataclass
class Keys:
    """Handles on one key store; `another()` opens one more on the same storage."""

    open_handle: Callable[[], KeyStore]
    opened: list[KeyStore] = field(default_factory=list)

    def another(self) -> KeyStore:
        self.opened.append(self.open_handle())
        return self.opened[-1]

    @staticmethod
    def close(handle: KeyStore) -> None:
        closer = getattr(handle, "close", None)
        if closer is not None:
            closer()


@pytest.fixture(params=ADAPTERS)
def keys(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Keys]:
    kind: str = request.param
    if kind == "in_memory":
        shared = InMemoryKeyStore()
        made = Keys(lambda: shared)
    elif kind == "sqlite":
        made = Keys(lambda: SqliteKeyStore(tmp_path / "keys.sqlite"))
    else:
        location: PostgresLocation = request.getfixturevalue("postgres")
        schema = new_schema(location, "keys")
        made = Keys(lambda: PostgresKeyStore(location.conninfo, schema=schema))
    yield made
    for handle in made.opened:
        Keys.close(handle)


@pytest.fixture
def store(keys: Keys) -> KeyStore:
    return keys.another()


def test_a_scope_gets_one_key_on_first_use_and_keeps_it(store: KeyStore) -> None:
    key_id, key = store.current(SUBJECT)
    assert len(key) == KEY_BYTES
    assert store.current(SUBJECT) == (key_id, key)
    assert store.key(key_id) == key


def test_an_unknown_key_id_is_none(store: KeyStore) -> None:
    store.current(SUBJECT)
    assert store.key("0" * 32) is None


def test_scopes_never_share_keys(store: KeyStore) -> None:
    found = {scope: store.current(scope) for scope in (SUBJECT, FIELD, OTHER_SUBJECT)}
    assert len({key_id for key_id, _ in found.values()}) == 3
    assert len({key for _, key in found.values()}) == 3


def test_forget_makes_the_scopes_keys_unreadable_for_good(store: KeyStore) -> None:
    key_id, _ = store.current(FIELD)
    assert store.forget(FIELD) == 1
    assert store.key(key_id) is None
    new_id, new_key = store.current(FIELD)  # a later write gets a new key
    assert new_id != key_id
    assert store.key(key_id) is None
    assert store.key(new_id) == new_key


def test_forget_is_idempotent(store: KeyStore) -> None:
    store.current(FIELD)
    assert store.forget(FIELD) == 1
    assert store.forget(FIELD) == 0
    assert store.forget("never-used") == 0


def test_forgetting_one_scope_leaves_every_other_scope_alone(store: KeyStore) -> None:
    kept = {scope: store.current(scope) for scope in (SUBJECT, OTHER_SUBJECT)}
    field_id, _ = store.current(FIELD)
    assert store.forget(FIELD) == 1
    assert store.key(field_id) is None
    for scope, (key_id, key) in kept.items():
        assert store.key(key_id) == key
        assert store.current(scope) == (key_id, key)
    store.current(FIELD)
    assert store.forget(SUBJECT) == 1  # a subject's scope is not a prefix of its fields'
    assert store.forget(FIELD) == 1


def test_two_handles_share_keys_and_forgets(keys: Keys) -> None:
    a, b = keys.another(), keys.another()
    key_id, key = a.current(SUBJECT)
    assert b.current(SUBJECT) == (key_id, key)
    assert b.key(key_id) == key
    assert b.forget(SUBJECT) == 1
    assert a.key(key_id) is None
    assert a.current(SUBJECT)[0] != key_id


def test_concurrent_first_uses_agree_on_one_key(keys: Keys) -> None:
    handles = [keys.another() for _ in range(2)]
    results: list[tuple[str, bytes]] = []
    start = threading.Barrier(6)

    def first_use(handle: KeyStore) -> None:
        start.wait()
        results.append(handle.current(SUBJECT))

    threads = [threading.Thread(target=first_use, args=(handles[n % 2],)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 6
    assert len(set(results)) == 1
    assert handles[0].forget(SUBJECT) == 1


@pytest.mark.parametrize("keys", DURABLE, indirect=True)
def test_keys_and_forgets_survive_closing_the_store(keys: Keys) -> None:
    first = keys.another()
    kept_id, kept = first.current(SUBJECT)
    gone_id, _ = first.current(FIELD)
    first.forget(FIELD)
    Keys.close(first)

    reopened = keys.another()
    assert reopened.current(SUBJECT) == (kept_id, kept)
    assert reopened.key(gone_id) is None
    assert reopened.current(FIELD)[0] != gone_id


def test_keys_by_id_reads_many_keys_and_leaves_out_forgotten_ones(keys: Keys) -> None:
    store = keys.another()
    field_id, field_key = store.current(FIELD)
    subject_id, subject_key = store.current(SUBJECT)
    other_id, other_key = store.current(OTHER_SUBJECT)
    assert store.forget(FIELD) == 1
    # Another handle (another process) reads what this one wrote; 600 ids pass any batch limit.
    unknown = [f"{n:032x}" for n in range(600)]
    found = keys.another().keys_by_id([field_id, subject_id, other_id, *unknown])
    assert found == {subject_id: subject_key, other_id: other_key}
    assert field_key not in found.values()
    assert store.keys_by_id([]) == {}


def test_current_many_gives_each_scope_its_own_live_key_in_one_call(store: KeyStore) -> None:
    lines = [f"{SUBJECT}/~line/s1#{n}" for n in range(3)]
    known = store.current(FIELD)
    found = store.current_many([*lines, FIELD, lines[0]])
    assert set(found) == {*lines, FIELD}
    assert found[FIELD] == known  # an existing scope keeps its key
    assert len({key_id for key_id, _ in found.values()}) == 4
    assert store.current_many(lines) == {scope: found[scope] for scope in lines}


def test_forget_many_deletes_those_scopes_only(store: KeyStore) -> None:
    first, second, kept = (f"{SUBJECT}/~line/s1#{n}" for n in range(3))
    found = store.current_many([first, second, kept])
    assert store.forget_many([first, second]) == 2
    assert store.keys_by_id([key_id for key_id, _ in found.values()]) == {
        found[kept][0]: found[kept][1]
    }
    assert store.forget_many([first]) == 0


def test_forget_prefix_deletes_every_scope_of_the_subject_and_no_other(store: KeyStore) -> None:
    mine = [
        SUBJECT,
        FIELD,
        f"{SUBJECT}/~line/s1#0",
        f"{SUBJECT}/~summary/s1",
        f"{SUBJECT}#snapshot",
    ]
    theirs = [OTHER_SUBJECT, f"{OTHER_SUBJECT}/supplier"]
    found = store.current_many([*mine, *theirs])
    assert store.forget_prefix(SUBJECT) == len(mine)
    left = store.keys_by_id([key_id for key_id, _ in found.values()])
    assert set(left) == {found[scope][0] for scope in theirs}


def test_retiring_a_scope_gives_it_a_new_key_and_keeps_the_old_until_its_new_scope_goes(
    store: KeyStore,
) -> None:
    old_id, old = store.current(SUBJECT)
    retired = f"{SUBJECT}/~retired/r1"
    assert store.retire(SUBJECT, retired) == old_id
    new_id, _ = store.current(SUBJECT)
    assert new_id != old_id
    assert store.key(old_id) == old  # still opens what it sealed
    assert store.retire(f"{SUBJECT}/~never-used", "elsewhere") is None
    assert store.forget(retired) == 1
    assert store.key(old_id) is None
    assert store.current(SUBJECT)[0] == new_id  # the new key is untouched
