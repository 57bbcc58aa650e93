"""`SplitSqliteIdempotencyStore`: the embedded default's saved responses in two files.

- Commands that save ledger events and hand the HTTP layer a `render` (decisions, session
  ends, expiries) keep their records in the ledger's own file (`ledger_commands`), where the
  ledger's recorder writes the response in the events' transaction: a crash between the
  two can no longer happen (ADR 0037).
- Everything else (message appends above all, which never touch the ledger) stays in the
  idempotency file, so an append's claim never waits for the ledger's write lock.
- `forget_subject` deletes a subject's saved responses in both files.
"""

from __future__ import annotations

from uuid import UUID

from factledger.adapters.sqlite.idempotency_store import SqliteIdempotencyStore
from factledger.application.ledger.idempotency import Claim, IdempotencyScope, JsonBody


class SplitSqliteIdempotencyStore:
    """The idempotency file's store, with the ledger file's store for ledger commands."""

    def __init__(
        self, own: SqliteIdempotencyStore, ledger_commands: SqliteIdempotencyStore
    ) -> None:
        self._own = own
        self.ledger_commands = ledger_commands

    async def claim(self, scope: IdempotencyScope, fingerprint: str) -> Claim:
        return await self._own.claim(scope, fingerprint)

    async def complete(self, scope: IdempotencyScope, fingerprint: str, body: JsonBody) -> None:
        await self._own.complete(scope, fingerprint, body)

    async def release(self, scope: IdempotencyScope, fingerprint: str) -> None:
        await self._own.release(scope, fingerprint)

    async def renew(self, scope: IdempotencyScope, fingerprint: str) -> bool:
        return await self._own.renew(scope, fingerprint)

    async def forget_subject(self, tenant: str, subject_id: UUID) -> int:
        own = await self._own.forget_subject(tenant, subject_id)
        return own + await self.ledger_commands.forget_subject(tenant, subject_id)

    @property
    def lease_s(self) -> float:
        return self._own.lease_s

    @property
    def ttl_s(self) -> float:
        return self._own.ttl_s

    def close(self) -> None:
        self.ledger_commands.close()
        self._own.close()
