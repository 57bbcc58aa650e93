"""The self-hosted memory backend on PostgreSQL + pgvector (ADR 0006)."""
