"""The composition root: `Settings` -> every port, in one `Runtime`. The only place that
chooses adapters.

- `compose`: the entries (`open_runtime`, `open_ledger_runtime`, and the two single-part
  ones the operator commands use); each owns the runtime's PostgreSQL server.
- `runtime`: the `Runtime` bundle and the `Needs` that say which parts a process opens.
- `postgres`: `PostgresServer`, the one owner of an embedded PostgreSQL.
- `ledger`: the event store, its keys and the profile views.
- `backend`: the embedder, the extractor and the memory backend.
- `services`: short-term memory, recall, the sync store and the sync worker.
- `idempotency`: the idempotency store beside the event store (swept in the background).
- `background`: tasks a runtime keeps on its event loop until it closes.
"""
