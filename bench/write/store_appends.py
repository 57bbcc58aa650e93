"""The PostgreSQL append path without HTTP: what one append costs the stores' client.

Each build (this install, or `--baseline-python`'s) runs the same script on an embedded
server of its own: 16 tasks on one event loop, each on its own open session, each append as
the API runs it with an `Idempotency-Key` (claim the key, append the message under its id,
read the session for the response, save the response). Printed: appends/s, and the CPU time
the client process spent per append, which the machine's other load moves far less than
the rate. The script only uses what every build has (the stores' `connect`, `claim`,
`append`, `get`, `complete`), so a baseline install runs it unchanged.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass

from factledger.bench.machine import load_average

TASKS, APPENDS_EACH = 16, 150

_SCRIPT = """
import asyncio, sys, tempfile, time, uuid
from datetime import UTC, datetime
from pathlib import Path
import structlog
from factledger.adapters.postgres.event_store import ensure_schema
from factledger.adapters.postgres.idempotency_store import PostgresIdempotencyStore
from factledger.adapters.postgres.session_buffer import PostgresSessionBuffer
from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.application.ledger.idempotency import IdempotencyScope
from factledger.application.sessions.types import ActiveSession, SessionId, SessionKey
from factledger.domain.transcript import Channel, Message, Role

TASKS, EACH = int(sys.argv[2]), int(sys.argv[3])

async def main(location):
    ensure_schema(location, "bench_buffer")
    idem = await PostgresIdempotencyStore.connect(location.conninfo, schema="bench_idem")
    buf = await PostgresSessionBuffer.connect(location.conninfo, schema="bench_buffer")

    async def client(t):
        subject = uuid.uuid4()
        key = SessionKey(subject, SessionId(f"s-{t}"))
        opened = ActiveSession(session_id=SessionId(f"s-{t}"), subject_id=subject,
                               channel=Channel.CHAT, started_at=datetime.now(UTC))
        await buf.open(opened)
        for n in range(EACH):
            k = uuid.uuid4().hex
            scope = IdempotencyScope("bench", "agent", subject, k)
            await idem.claim(scope, "fingerprint")
            message = Message(Role.SUBJECT, f"We buy from Acme, order {n}.", datetime.now(UTC))
            index = await buf.append(key, message, message_id=k)
            session = await buf.get(key)
            body = {"kept": True, "index": index, "withheld_total": session.withheld}
            await idem.complete(scope, "fingerprint", body)

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(client(t) for t in range(TASKS)))
    print(TASKS * EACH, time.perf_counter() - wall, time.process_time() - cpu)
    await idem.close()
    await buf.close()

structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
server = EmbeddedPostgres(Path(sys.argv[1]) / "pg", delete_on_stop=True)
try:
    asyncio.run(main(server.location))
finally:
    server.stop()
"""


@dataclass(frozen=True, slots=True)
class StoreAppends:
    appends: int
    seconds: float
    cpu_seconds: float
    load_average: str

    @property
    def per_second(self) -> float:
        return self.appends / self.seconds

    @property
    def cpu_ms_each(self) -> float:
        return self.cpu_seconds / self.appends * 1e3


def measure_store_appends(python: str) -> StoreAppends:
    """One run of the append path by `python`'s install, on a fresh embedded server."""
    with tempfile.TemporaryDirectory(prefix="factledger-store-appends-") as where:
        out = subprocess.run(  # noqa: S603 - an interpreter the caller named, our own script
            [python, "-c", _SCRIPT, where, str(TASKS), str(APPENDS_EACH)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    return StoreAppends(int(out[-3]), float(out[-2]), float(out[-1]), load_average())
