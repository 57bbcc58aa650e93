"""Done-when test of erasure (ADR 0015): distinctive values written through the HTTP API, a
field forgotten and a subject erased, the sync run to completion; then every data file, every
table and every log line of the run is scanned for them. The only hits allowed are those the
ADR names as retained: PostgreSQL's write-ahead log (`pg_wal`).

Runs on the embedded default (SQLite files, in-memory backend) and on PostgreSQL + pgvector
(a dedicated embedded server in a temp dir, so its data directory holds this run alone)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import psycopg
import pytest
import structlog
from psycopg import sql
from support.api_harness import TEST_AUTH, bearer, line, token
from support.older_sealing import unkeyed_fingerprint

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Needs, Runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role
from factledger.api.settings import Settings, load_settings
from factledger.application.memory.forwarding import innermost_backend
from factledger.domain.events import SessionRecorded
from factledger.domain.subject import legacy_subject_id
from factledger.testing.manual_clock import ManualClock

# Distinctive, and split into words no other text of the run contains.
FORGOTTEN = "Zanzibar Periwinkle"  # the value of a field that is then forgotten
ERASED = "Quixotic Marzipan"  # everything about a subject that is then erased
# What identifies the erased person beyond their words: the reference, the erasure's reason
# (reasons are sealed under the subject's key), and the session's fingerprint (a digest of its
# words, sealed too); found nowhere after the erasure, though never all written in clear.
ERASED_REF = "crm-Fairweather-Ottoline"
ERASE_REASON = "erasure request Tangerine Quokka"
CANARIES = (FORGOTTEN, ERASED)
RETAINED = ("pg_wal",)  # ADR 0015: the write-ahead log ages out with its segments
# Tables the erasure itself leaves without a byte of erased rows; the others' dead rows go at
# the next (auto)vacuum (ADR 0015), which the test runs before its final scan.
CLEANED_AT_ONCE = ("factledger_memory.", "public.idempotency_keys")
SERVICE = bearer(token(Role.SERVICE))
ADMIN = bearer(token(Role.ADMIN))
IN_PROCESS = Needs(run_sync=False)  # the test runs the sync itself, to completion


def agent(ref: str) -> dict[str, str]:
    return bearer(token(Role.AGENT, kind="lead", ref=ref))


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


class Story:
    """Two subjects through the API: one forgets a field, the other is erased."""

    def __init__(self, http: httpx.AsyncClient, rt: Runtime, clock: ManualClock) -> None:
        self.http, self.rt, self.clock = http, rt, clock
        self.written: set[str] = set()  # canaries found in the data before the erasures
        self.fingerprint = ""  # of the erased subject's session, read before the erasure
        self.guessable = ""  # the plain SHA-256 a guesser of that session's words can compute
        self.erased_id = UUID(int=0)

    async def sync(self) -> None:
        worker = self.rt.sync_worker
        assert worker is not None
        while (report := await worker.run_once()).fed or report.done:
            assert report.dead == 0
        assert report.dead == 0

    async def talk(self, ref: str, session: str, words: str, *, summary: str | None) -> str:
        """A session stating a supplier, confirmed by a reviewer; returns the subject id."""
        http, who = self.http, agent(ref)
        body = {"kind": "lead", "external_ref": ref}
        subject = await ok(await http.post("/v1/subjects", json=body, headers=SERVICE), 201)
        start = {"session_id": session, "channel": "whatsapp"}
        await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=who), 201)
        message = {"role": "subject", "text": f"We switched to {words} for our supplies."}
        keyed = {**who, "Idempotency-Key": f"{session}-message-0"}
        await ok(
            await http.post(**line(f"/v1/subjects/me/sessions/{session}/messages", message, keyed))
        )
        proposal = {
            "field": "supplier",
            "value": {"type": "text", "value": words},
            "origin": "stated",
            "evidence": {"session_id": session, "message_index": 0, "quote": words},
            "condition": f"while {words} delivers",
            "based_on_version": 0,
        }
        end: dict[str, Any] = {"proposals": [proposal]}
        if summary is not None:
            end["summary"] = {"topic": summary}
        keyed = {**who, "Idempotency-Key": f"{session}-end-0001"}
        ended = await ok(
            await http.post(f"/v1/subjects/me/sessions/{session}/end", json=end, headers=keyed)
        )
        sid, change = subject["subject_id"], ended["proposals"][0]["change_id"]
        url = f"/v1/subjects/{sid}/proposals/{change}/approve"
        await ok(
            await http.post(url, json={}, headers={**ADMIN, "Idempotency-Key": f"{session}-ok-01"})
        )
        recalled = await ok(await http.post("/v1/subjects/me/context", json={}, headers=who))
        assert words in str(recalled)
        return str(sid)

    async def run(self, look: Callable[[], str]) -> None:
        """`look` returns what the data holds now (files or tables), to show the canaries
        were written at all."""
        await self.talk("crm-forget", "wa-forget", FORGOTTEN, summary=None)
        erased = await self.talk(ERASED_REF, "wa-erase", ERASED, summary=f"likes {ERASED}")
        self.erased_id = UUID(erased)
        recorded = [
            e for e in self.rt.ledger.events.get(UUID(erased)) if isinstance(e, SessionRecorded)
        ]
        self.fingerprint = recorded[0].fingerprint
        self.guessable = unkeyed_fingerprint(recorded[0])
        await self.sync()
        self.written = {c for c in CANARIES if c in look()}
        forget = {"field": "supplier", "reason": "the subject asked"}
        keyed = {**agent("crm-forget"), "Idempotency-Key": "forget-0001"}
        await ok(await self.http.post("/v1/subjects/me/forget", json=forget, headers=keyed))
        body = {"reason": ERASE_REASON}
        await ok(
            await self.http.request("DELETE", f"/v1/subjects/{erased}", json=body, headers=ADMIN)
        )
        await self.sync()
        self.rt.catch_up()


@asynccontextmanager
async def api(settings: Settings, clock: ManualClock) -> AsyncIterator[Story]:
    async with open_runtime(settings, IN_PROCESS, clock=clock) as rt:
        transport = httpx.ASGITransport(app=create_app(ports=rt, auth=TEST_AUTH))
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
            yield Story(http, rt, clock)


def hits_in_files(root: Path, canaries: tuple[str, ...] = CANARIES) -> list[str]:
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path.relative_to(root)}: {c}" for c in canaries if c.encode() in data]
    return found


def identifying(story: Story) -> tuple[str, ...]:
    """The person's reference, the reason and the fingerprint (keyed, and the plain digest a
    guesser could compute, which was never written), and what anyone can derive from
    the reference alone: its name-based uuid5, the id subjects had before keyed ids (as text
    and hex; `derivable_bytes` checks its raw bytes, as PostgreSQL's uuid columns hold it)."""
    derived = legacy_subject_id("t1", "lead", ERASED_REF)
    return (
        ERASED_REF,
        ERASE_REASON,
        story.fingerprint,
        story.guessable,
        str(derived),
        derived.hex,
    )


def derivable_bytes() -> bytes:
    return legacy_subject_id("t1", "lead", ERASED_REF).bytes


def raw_hits(root: Path, needle: bytes) -> list[str]:
    return [
        str(path.relative_to(root))
        for path in sorted(p for p in root.rglob("*") if p.is_file())
        if needle in path.read_bytes()
    ]


def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 3, 10, tzinfo=UTC))


@pytest.fixture
def data_dir(server_dir: Path) -> Path:
    """A folder the embedded server's user can reach (`server_dir`); the SQLite run uses one
    too, so both scans read a folder that holds this run alone."""
    return server_dir


async def test_nothing_forgotten_or_erased_is_left_in_the_sqlite_files_or_the_logs(
    data_dir: Path,
) -> None:
    settings = load_settings(data_dir=data_dir, embedder={"kind": "hashing"})
    with structlog.testing.capture_logs() as logs:
        async with api(settings, clock()) as story:
            await story.run(lambda: "\n".join(hits_in_files(data_dir)))

    assert story.written == set(CANARIES)
    assert hits_in_files(data_dir) == []
    assert hits_in_files(data_dir, identifying(story)) == []
    assert raw_hits(data_dir, derivable_bytes()) == []
    assert not [c for c in (*CANARIES, *identifying(story)) if c in repr(logs)]
    # The erased subject's id, kept in its receipt, is keyed: it confirms no guessed reference
    assert story.erased_id.version == 8


def pg_settings(data_dir: Path, location: PostgresLocation) -> Settings:
    return load_settings(
        data_dir=data_dir / "app",
        database_url=(
            f"postgresql://{location.user}:@:{location.port}/{location.dbname}?host={location.host}"
        ),
        event_store={"kind": "postgres"},
        views={"kind": "postgres"},
        short_term={"kind": "postgres"},
        sync={"store": {"kind": "postgres"}},
        backend={"kind": "pgvector"},
        embedder={"kind": "hashing"},
    )


def dump_tables(conninfo: str) -> str:
    """Every row of every table of every schema but the catalogs, as text."""
    rows: list[str] = []
    with psycopg.connect(conninfo) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' "
            "AND table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        for schema, table in tables:
            query = sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(schema, table))
            rows += [f"{schema}.{table}: {r[0]}" for r in conn.execute(query).fetchall()]
    return "\n".join(rows)


def relation_files(conninfo: str) -> dict[str, str]:
    """Data file (relative to the data directory) -> schema.relation, to name the hits."""
    with psycopg.connect(conninfo) as conn:
        rows = conn.execute(
            "SELECT pg_relation_filepath(c.oid), n.nspname || '.' || c.relname "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE pg_relation_filepath(c.oid) IS NOT NULL"
        ).fetchall()
    return {str(path): name for path, name in rows}


def named(hits: list[str], relations: dict[str, str]) -> list[str]:
    out = []
    for hit in hits:
        path, canary = hit.split(": ", 1)
        base = path.removeprefix("pg/").split(".")[0].removesuffix("_fsm").removesuffix("_vm")
        out.append(f"{relations.get(base, path)}: {canary}")
    return out


@pytest.mark.integration
async def test_nothing_forgotten_or_erased_is_left_in_postgres_or_pgvector(
    data_dir: Path,
) -> None:
    server = EmbeddedPostgres(data_dir / "pg", delete_on_stop=False)
    try:
        location = server.location
        with structlog.testing.capture_logs() as logs:
            async with api(pg_settings(data_dir, location), clock()) as story:
                await story.run(lambda: dump_tables(location.conninfo))
                # as the worker's compaction round does
                pgvector = innermost_backend(story.rt.backend)
                assert isinstance(pgvector, PgvectorMemoryBackend)
                compacted = await pgvector.compact_erased()
        dumped = dump_tables(location.conninfo)
        with psycopg.connect(location.conninfo, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
            before_vacuum = [
                h for h in hits_in_files(data_dir / "pg") if not h.startswith(RETAINED)
            ]
            conn.execute("VACUUM")
            conn.execute("CHECKPOINT")
        relations = relation_files(location.conninfo)
    finally:
        server.stop()

    assert story.written == set(CANARIES)
    everything = (*CANARIES, *identifying(story))
    assert not [c for c in everything if c in dumped]
    hits = [
        h
        for h in hits_in_files(data_dir, everything)
        if not h.removeprefix("pg/").startswith(RETAINED)
    ]
    assert named(hits, relations) == [], "\n".join(named(hits, relations))
    raw = [
        h
        for h in raw_hits(data_dir, derivable_bytes())
        if not h.removeprefix("pg/").startswith(RETAINED)
    ]
    assert raw == [], raw
    assert not [c for c in everything if c in repr(logs)]
    assert story.erased_id.version == 8
    assert set(compacted) == {
        "chunks",
        "documents",
        "memories",
        "memory_terms",
        "records",
        "ann_indexes",
    }
    # What the erasing code cleans itself, before any VACUUM of the test's: the backend's tables
    # (pruned at once, rewritten by the compaction round) and the saved responses (rewritten)
    own = [h for h in named(before_vacuum, relations) if h.startswith(CLEANED_AT_ONCE)]
    assert own == [], "\n".join(own)
