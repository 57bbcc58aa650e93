"""The ledger's stores in PostgreSQL: event store settings, keys, views, session buffer,
idempotency and the sync queue."""
