"""Use cases and the ports they need; no framework and no I/O."""
