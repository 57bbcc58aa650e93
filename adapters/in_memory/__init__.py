"""In process memory: the whole memory port with real search, and every store the embedded
development runs need (views, session buffer, sync queue, idempotency)."""
