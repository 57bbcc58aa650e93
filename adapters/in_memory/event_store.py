"""The ledger's event store in process memory, in the `eventsourcing` library's terms."""

from __future__ import annotations


def popo_env() -> dict[str, str]:
    """In memory (plain old Python objects): tests, and throwaway demos."""
    return {"PERSISTENCE_MODULE": "eventsourcing.popo"}
