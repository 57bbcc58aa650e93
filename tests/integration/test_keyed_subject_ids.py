"""A subject's id is keyed under the deployment's key, on the embedded default (SQLite files)
and on PostgreSQL: over HTTP, a new subject's id is no name-based uuid of its reference; every
API process (two runtimes on the same stores, then a restart) registers, looks up and resolves
a token by reference to the same id, also through `POST /v1/import`; a subject registered before
keyed ids keeps its id; a key store that fails answers 503, and a lost key answers 503 instead
of a new id for a known reference."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid4, uuid5

import httpx
import psycopg
import pytest
from psycopg import sql
from pydantic import SecretStr
from support.api_harness import TEST_AUTH, bearer, token

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.compose import open_ledger_runtime, open_runtime
from factledger.api.bootstrap.runtime import Needs, Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import PostgresEventStoreSettings, Settings
from factledger.application.ledger.subject_ids import SUBJECT_ID_SCOPE
from factledger.domain.subject import SUBJECT_NAMESPACE, Subject, legacy_subject_id

SERVICE = bearer(token(Role.SERVICE))
ADMIN = bearer(token(Role.ADMIN))
LIGHT = Needs(backend=False, run_sync=False)  # the ledger, its keys, views, sessions, imports
REF = "ada.lovelace@example.com"  # a reference anyone could guess


def agent(ref: str) -> dict[str, str]:
    return bearer(token(Role.AGENT, kind="lead", ref=ref))


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def guesses(ref: str) -> set[UUID]:
    """What someone holding only the reference can compute."""
    return {
        legacy_subject_id("t1", "lead", ref),
        uuid5(SUBJECT_NAMESPACE, ref),
        uuid5(NAMESPACE_URL, ref),
        uuid5(SUBJECT_NAMESPACE, f"t1/lead/{ref}#0"),
        uuid5(NAMESPACE_URL, f"t1/lead/{ref}"),
    }


class Store:
    """One deployment's stores: its settings, and a hand on its key table to break it."""

    def __init__(self, settings: Settings, name: str) -> None:
        self.settings, self.name = settings, name
        self.runtimes: list[Runtime] = []  # of the API processes open now

    def sessions(self, subject_id: str) -> list[str]:
        """The sessions recorded on the subject, read from the ledger of a process."""
        return sorted(self.runtimes[0].ledger.subject("t1", UUID(subject_id)).sessions)

    @contextmanager
    def keys_sql(self) -> Iterator[tuple[Any, str]]:
        """A connection to the key store's database, and the key table's qualified name."""
        store = self.settings.event_store
        if isinstance(store, PostgresEventStoreSettings):
            conninfo = self.settings.database_url.get_secret_value()  # type: ignore[union-attr]
            with psycopg.connect(conninfo, autocommit=True) as conn:
                yield conn, sql.Identifier(store.schema_name, "ledger_keys").as_string(conn)
        else:
            conn = sqlite3.connect(self.settings.keys_path(), isolation_level=None)
            try:
                yield conn, "subject_keys"
            finally:
                conn.close()

    def rename_keys(self, old: str, new: str) -> None:
        with self.keys_sql() as (conn, table):
            schema = table.rpartition(".")[0]
            old_name = f"{schema}.{old}" if schema else old
            conn.execute(f"ALTER TABLE {old_name} RENAME TO {new}")

    def take_id_key(self) -> tuple[Any, ...]:
        """Deletes the key of subject ids (a key store restored without it); returns its row."""
        with self.keys_sql() as (conn, table):
            where = f"FROM {table} WHERE scope = "
            mark = "%s" if isinstance(conn, psycopg.Connection) else "?"
            rows = conn.execute(f"SELECT * {where}{mark}", (SUBJECT_ID_SCOPE,)).fetchall()
            conn.execute(f"DELETE {where}{mark}", (SUBJECT_ID_SCOPE,))
        assert len(rows) == 1
        return tuple(rows[0])

    def put_back(self, row: tuple[Any, ...]) -> None:
        with self.keys_sql() as (conn, table):
            mark = "%s" if isinstance(conn, psycopg.Connection) else "?"
            conn.execute(f"INSERT INTO {table} VALUES ({', '.join([mark] * 4)})", row)  # noqa: S608

    def key_table(self) -> tuple[str, str]:
        """(the key table's unqualified name, the name to rename it to)."""
        if isinstance(self.settings.event_store, PostgresEventStoreSettings):
            return "ledger_keys", "ledger_keys_away"
        return "subject_keys", "subject_keys_away"


def url_of(location: PostgresLocation) -> str:
    auth = f"{location.user}:{location.password}"
    if location.host.startswith("/"):
        return f"postgresql://{auth}@:{location.port}/{location.dbname}?host={location.host}"
    return f"postgresql://{auth}@{location.host}:{location.port}/{location.dbname}"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "sqlite":
        settings = Settings(data_dir=tmp_path, embedder={"kind": "hashing"}, auth=TEST_AUTH)  # type: ignore[arg-type]
        return Store(settings, "sqlite")
    location: PostgresLocation = request.getfixturevalue("postgres")
    suffix = uuid4().hex[:8]
    settings = Settings(
        data_dir=tmp_path,
        database_url=SecretStr(url_of(location)),
        event_store={"kind": "postgres", "schema_name": f"ids_events_{suffix}"},  # type: ignore[arg-type]
        views={"kind": "postgres", "schema_name": f"ids_views_{suffix}"},  # type: ignore[arg-type]
        short_term={"kind": "postgres", "schema_name": f"ids_short_{suffix}"},  # type: ignore[arg-type]
        sync={"store": {"kind": "postgres", "schema_name": f"ids_sync_{suffix}"}},  # type: ignore[arg-type]
        embedder={"kind": "hashing"},  # type: ignore[arg-type]
        auth=TEST_AUTH,
    )
    return Store(settings, "postgres")


@asynccontextmanager
async def apis(store: Store, count: int) -> AsyncIterator[list[httpx.AsyncClient]]:
    """`count` API processes' worth of runtimes on the store, each with its own ledger, key
    cache and connections, and a client of each."""
    async with AsyncExitStack() as stack:
        clients = []
        store.runtimes = []
        stack.callback(store.runtimes.clear)
        for n in range(count):
            runtime = await stack.enter_async_context(open_runtime(store.settings, LIGHT))
            store.runtimes.append(runtime)
            app = create_app(store.settings, ports=runtime)
            http = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url=f"http://api-{n}"
            )
            stack.push_async_callback(http.aclose)
            clients.append(http)
        yield clients


async def register(http: httpx.AsyncClient, ref: str, **extra: Any) -> dict[str, Any]:
    body = {"kind": "lead", "external_ref": ref, **extra}
    answer: dict[str, Any] = await ok(
        await http.post("/v1/subjects", json=body, headers=SERVICE), 201
    )
    return answer


async def lookup(http: httpx.AsyncClient, ref: str) -> str:
    params = {"kind": "lead", "external_ref": ref}
    found = await ok(await http.get("/v1/subjects/lookup", params=params, headers=SERVICE))
    return str(found["subject_id"])


async def whoami(http: httpx.AsyncClient, ref: str) -> str:
    return str((await ok(await http.get("/v1/whoami", headers=agent(ref))))["subject_id"])


def history(ref: str, session: str) -> bytes:
    at = datetime(2026, 2, 2, 9, tzinfo=UTC).isoformat()
    line = (
        '{"type": "session", "subject": {"kind": "lead", "ref": "%s"}, "session_id": "%s",'
        ' "channel": "whatsapp", "started_at": "%s",'
        ' "messages": [{"role": "subject", "text": "We buy from Supplier A.", "at": "%s"}]}\n'
    )
    return (line % (ref, session, at, at)).encode()


async def imported(http: httpx.AsyncClient, ref: str, session: str) -> None:
    headers = {**SERVICE, "content-type": "application/x-ndjson"}
    report = await ok(await http.post("/v1/import", content=history(ref, session), headers=headers))
    assert report["sessions"] == 1, report


async def test_a_new_subjects_id_is_keyed_and_one_in_every_process_and_after_a_restart(
    store: Store,
) -> None:
    async with apis(store, 2) as (a, b):
        first = await register(a, REF)
        subject_id = UUID(first["subject_id"])
        assert first["created"] is True
        # Not the reference's uuid5, nor any name-based uuid of it: a guess confirms nothing.
        assert subject_id.version == 8
        assert subject_id not in guesses(REF)
        # Another process derives the same id: a retry there finds the subject.
        again = await register(b, REF)
        assert (again["subject_id"], again["created"]) == (str(subject_id), False)
        assert await lookup(b, REF) == str(subject_id)
        assert await whoami(b, REF) == str(subject_id)
        # A reference first met through the import gets the id registration gives it.
        await imported(b, "crm-imported", "wa-imported")
        imported_id = await lookup(a, "crm-imported")
        assert UUID(imported_id).version == 8
        assert (await register(a, "crm-imported"))["subject_id"] == imported_id

    async with apis(store, 1) as (restarted,):
        after = await register(restarted, REF)
        assert (after["subject_id"], after["created"]) == (str(subject_id), False)
        assert await whoami(restarted, "crm-imported") == imported_id
        assert store.sessions(imported_id) == ["wa-imported"]


def registered_before_keyed_ids(store: Store, ref: str) -> UUID:
    """A subject as a ledger before keyed ids registered it: under its reference's uuid5."""
    legacy = legacy_subject_id("t1", "lead", ref)
    with open_ledger_runtime(store.settings, catch_up=False) as rt:
        at = rt.ledger.clock.now()
        rt.ledger.save(Subject.register("t1", "lead", ref, at=at, subject_id=legacy))
    return legacy


async def test_a_subject_registered_before_keyed_ids_keeps_its_id(store: Store) -> None:
    legacy = registered_before_keyed_ids(store, REF)
    async with apis(store, 2) as (a, b):
        found = await register(a, REF)
        assert (found["subject_id"], found["created"]) == (str(legacy), False)
        assert await lookup(b, REF) == str(legacy)
        assert await whoami(b, REF) == str(legacy)  # a token by reference, as before
        await imported(b, REF, "wa-old")
        assert store.sessions(str(legacy)) == ["wa-old"]
        # A new reference beside it gets a keyed id all the same
        assert UUID((await register(b, "crm-new"))["subject_id"]).version == 8

        # Erased, the reference returns as a new subject under a keyed id, linked to nothing
        erase = {"reason": "erasure request 3141"}
        await ok(await a.request("DELETE", f"/v1/subjects/{legacy}", json=erase, headers=ADMIN))
        body = {"kind": "lead", "external_ref": REF}
        refused = await b.post("/v1/subjects", json=body, headers=SERVICE)
        assert refused.status_code == 410, refused.text
        returned = await register(b, REF, returning=True)
        assert UUID(returned["subject_id"]).version == 8
        assert returned["subject_id"] != str(legacy)
        assert await lookup(a, REF) == returned["subject_id"]


async def test_a_key_store_that_fails_answers_503_and_registers_nothing(store: Store) -> None:
    table, away = store.key_table()
    async with apis(store, 1) as (http,):
        store.rename_keys(table, away)
        try:
            body = {"kind": "lead", "external_ref": REF}
            failed = await http.post("/v1/subjects", json=body, headers=SERVICE)
            assert failed.status_code == 503, failed.text
            assert failed.json()["error"] == "KeyStoreUnavailableError"
            assert "Retry-After" in failed.headers
            # A token by reference cannot be resolved either: 503, not a guess
            assert (await http.get("/v1/whoami", headers=agent(REF))).status_code == 503
        finally:
            store.rename_keys(away, table)
        # The store back, the same request registers the subject, keyed
        registered = await register(http, REF)
        assert registered["created"] is True
        assert UUID(registered["subject_id"]).version == 8


async def test_a_lost_key_answers_503_never_another_id(store: Store) -> None:
    async with apis(store, 1) as (http,):
        subject_id = (await register(http, REF))["subject_id"]
    row = store.take_id_key()  # the key store restored from a backup without it

    async with apis(store, 1) as (http,):
        for ref in (REF, "crm-never-seen"):
            body = {"kind": "lead", "external_ref": ref}
            lost = await http.post("/v1/subjects", json=body, headers=SERVICE)
            assert lost.status_code == 503, lost.text
            assert lost.json()["error"] == "SubjectIdKeyLostError"
            assert "restore the key store" in lost.json()["detail"]
        params = {"kind": "lead", "external_ref": REF}
        looked = await http.get("/v1/subjects/lookup", params=params, headers=SERVICE)
        assert looked.status_code == 503, looked.text
        assert (await http.get("/v1/whoami", headers=agent(REF))).status_code == 503
    with store.keys_sql() as (conn, table):  # no new key was made meanwhile
        count = conn.execute(f"SELECT count(*) FROM {table} WHERE scope = '~subject-ids'")  # noqa: S608
        assert count.fetchone()[0] == 0

    store.put_back(row)
    async with apis(store, 1) as (http,):
        again = await register(http, REF)
        assert (again["subject_id"], again["created"]) == (subject_id, False)
