"""A ledger process with writer threads on PostgreSQL, for the group commit's crash test
(ADR 0027): each thread proposes changes on its own subjects, and prints a command's id only
once the ledger answered it (its batch committed). The test SIGKILLs it mid-stream.

Run as `python tests/support/ledger_writer_worker.py LOCATION_JSON SCHEMA THREADS COMMANDS`
(a rerun sends every command again: the ledger's command ids make what was recorded a no-op).
"""

from __future__ import annotations

import json
import sys
import threading
from uuid import UUID

import structlog

from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.commands import ProposeChange, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.provenance import Actor, ActorKind, Operation, Origin
from factledger.domain.values import TextValue

TENANT = "acme"
SUBJECTS_PER_THREAD = 2
_print = threading.Lock()


def command(subject_id: UUID, thread: int, n: int) -> ProposeChange:
    return ProposeChange(
        tenant=TENANT,
        subject_id=subject_id,
        field=f"f_{thread}_{n}",
        operation=Operation.SET,
        value=TextValue(f"value {n}"),
        origin=Origin.INFERRED,
        proposed_by=Actor(ActorKind.MODEL, f"writer-{thread}"),
        based_on_version=0,
        command_id=f"cmd-{thread}-{n}",
    )


def write(ledger: Ledger, thread: int, commands: int) -> None:
    subjects = [
        ledger.register_subject(RegisterSubject(TENANT, "lead", f"w-{thread}-{s}")).subject_id
        for s in range(SUBJECTS_PER_THREAD)
    ]
    for n in range(commands):
        ledger.propose_change(command(subjects[n % SUBJECTS_PER_THREAD], thread, n))
        with _print:
            sys.stdout.write(f"answered cmd-{thread}-{n}\n")
            sys.stdout.flush()


def main(where: str, schema: str, threads: int, commands: int) -> None:
    # The ledger's logs go to stderr: stdout carries the answers alone, one line each.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    location = PostgresLocation(**json.loads(where))
    keys = PostgresKeyStore(location.conninfo, schema=schema)
    ledger = Ledger(postgres_env(location, schema=schema), keys=keys)
    workers = [threading.Thread(target=write, args=(ledger, t, commands)) for t in range(threads)]
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    ledger.close()
    keys.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
