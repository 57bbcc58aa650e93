"""The embedded default's stores in SQLite files: keys, views, session buffer, idempotency."""
