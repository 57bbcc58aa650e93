"""The self-hosted memory backend on PostgreSQL + pgvector."""
