"""Failover on PostgreSQL's own machinery: a primary with a synchronous hot standby, an API
process and a sync worker process that know both servers only through one multi-host URL
(`target_session_attrs=read-write`). Four writers register subjects while the primary is
killed with `kill -9` and the standby promoted: every registration the API answered 2xx is
there afterwards, the API and the worker serve again within 10 s without a restart, and the
old primary comes back as the new primary's standby (`pg_rewind`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg
import pytest
from support.api_harness import bearer, line, token
from support.polling import until
from support.replicated_service import replicated_env, worker_process
from support.serve_process import serving

from factledger.api.http.auth import Role
from factledger.testing.replication import replicated_postgres

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.serial]

SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="after-failover"))
WRITERS = 4
SERVES_AGAIN_WITHIN_S = 10.0


@dataclass
class Writer:
    """Registers subjects `w<n>-<i>` one after another; keeps the ids the API acknowledged
    (2xx) and when each answer came."""

    number: int
    base_url: str
    acknowledged: dict[str, str] = field(default_factory=dict)
    answered_at: list[float] = field(default_factory=list)
    refused: int = 0
    unexpected: str | None = None  # the answer that stopped it: neither a success nor a refusal

    def run(self, stop: threading.Event) -> None:
        with httpx.Client(base_url=self.base_url, timeout=10) as http:
            attempt = 0
            while not stop.is_set():
                ref = f"w{self.number}-{attempt}"
                attempt += 1
                body = {"kind": "lead", "external_ref": ref}
                try:
                    response = http.post("/v1/subjects", json=body, headers=SERVICE)
                except httpx.TransportError:
                    self.refused += 1
                    continue
                if response.is_success:
                    self.acknowledged[ref] = response.json()["subject_id"]
                    self.answered_at.append(time.monotonic())
                else:
                    # A lost primary costs a clear refusal, never a 500: a 503, or a 429 when
                    # the writes still waiting for a primary (a client that gave up on one
                    # has already sent its next) hold this tenant's share of concurrent writes.
                    if response.status_code not in (429, 503):
                        self.unexpected = f"{response.status_code} {response.text}"
                        return
                    self.refused += 1
                    # A 429's pause is the tenant's to keep; a 503's is tried sooner, so the
                    # writers notice the new primary as soon as it serves.
                    pause = response.headers["Retry-After"] if response.status_code == 429 else 0.05
                    time.sleep(float(pause))


def every_writer(writers: list[Writer], holds: Callable[[Writer], bool]) -> bool:
    """Whether `holds` is true of every writer; fails at once where one was stopped by an
    answer that was neither a success nor a clear refusal."""
    stopped = [w.unexpected for w in writers if w.unexpected is not None]
    assert stopped == [], stopped
    return all(holds(w) for w in writers)


def recalled(http: httpx.Client, text: str) -> bool:
    answer = http.post("/v1/subjects/me/recall", json={"query": "supplier"}, headers=AGENT)
    return answer.is_success and text in answer.text


def test_kill_9_of_a_synchronous_primary_loses_no_acknowledged_write(tmp_path: Path) -> None:
    with replicated_postgres(synchronous=True) as cluster:
        env = replicated_env(tmp_path / "api", cluster.url())
        with (
            serving(tmp_path / "api", env) as base_url,
            worker_process(env, tmp_path / "worker.log") as worker,
            httpx.Client(base_url=base_url, timeout=10) as http,
        ):
            writers = [Writer(n, base_url) for n in range(WRITERS)]
            stop = threading.Event()
            threads = [threading.Thread(target=w.run, args=(stop,)) for w in writers]
            for thread in threads:
                thread.start()
            try:
                until(
                    lambda: every_writer(writers, lambda w: len(w.acknowledged) >= 3), 30, "writes"
                )
                killed_at = time.monotonic()
                cluster.primary.crash()
                cluster.promote()
                # The API answers writes again, by itself, through the same URL.
                served_after = until(
                    lambda: every_writer(
                        writers, lambda w: bool(w.answered_at) and w.answered_at[-1] > killed_at
                    ),
                    SERVES_AGAIN_WITHIN_S,
                    "every writer acknowledged again after the kill",
                )
                time.sleep(0.5)  # a few more writes on the new primary
            finally:
                stop.set()
                for thread in threads:
                    thread.join(timeout=30)

            assert [w.unexpected for w in writers if w.unexpected is not None] == []
            acknowledged = {ref: sid for w in writers for ref, sid in w.acknowledged.items()}
            assert served_after <= SERVES_AGAIN_WITHIN_S
            # Writes acknowledged by the old primary and by the new one (a request in flight
            # at the kill waits for a connection, and may find the new primary within its wait).
            assert all(w.answered_at[0] < killed_at < w.answered_at[-1] for w in writers)
            lost = [
                ref
                for ref in acknowledged
                if http.get(
                    "/v1/subjects/lookup",
                    params={"kind": "lead", "external_ref": ref},
                    headers=SERVICE,
                ).status_code
                != 200
            ]
            assert lost == [], f"{len(lost)} of {len(acknowledged)} acknowledged writes lost"

            # The worker follows the new primary by itself: a session recorded now reaches
            # pgvector (through the worker process's sync) and recall finds it.
            synced_started = time.monotonic()
            body = {"kind": "lead", "external_ref": "after-failover"}
            assert http.post("/v1/subjects", json=body, headers=SERVICE).is_success
            start = {"session_id": "after-1", "channel": "voice"}
            assert http.post("/v1/subjects/me/sessions", json=start, headers=AGENT).is_success
            said = {"role": "subject", "text": "We moved to Supplier Failover in March."}
            posted = http.post(**line("/v1/subjects/me/sessions/after-1/messages", said, AGENT))
            assert posted.is_success, posted.text
            ended = http.post("/v1/subjects/me/sessions/after-1/end", json={}, headers=AGENT)
            assert ended.is_success, ended.text
            try:
                until(
                    lambda: recalled(http, "Failover"), SERVES_AGAIN_WITHIN_S, "synced and recalled"
                )
            except AssertionError as exc:
                tail = (tmp_path / "worker.log").read_text()[-6000:]
                raise AssertionError(
                    f"{exc}; worker alive: {worker.poll() is None}\n{tail}"
                ) from None
            assert worker.poll() is None  # the same worker process, never restarted
            assert time.monotonic() - synced_started <= SERVES_AGAIN_WITHIN_S + 5

            # The old primary rewinds onto the new timeline and follows as its standby; the
            # new primary waits for it again (synchronous), and it holds every write.
            cluster.rejoin()
            assert cluster.standby.is_in_recovery()
            again = {**body, "external_ref": "rejoined"}
            assert http.post("/v1/subjects", json=again, headers=SERVICE).is_success
            conninfo = cluster.standby.location.conninfo

            def streams_on_the_old_primary() -> int:
                with psycopg.connect(conninfo, connect_timeout=3, autocommit=True) as conn:
                    row = conn.execute(
                        "SELECT count(DISTINCT originator_id) FROM ledger_r.ledger_events"
                    ).fetchone()
                return 0 if row is None else int(row[0])

            # Flushed there before the commit returned; replayed a moment later.
            until(
                lambda: streams_on_the_old_primary() >= len(acknowledged) + 2,
                SERVES_AGAIN_WITHIN_S,
                "the old primary replays every write",
            )
