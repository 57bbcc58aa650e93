"""Contract: a backend declares what its facts carry, and the declaration is well formed."""

from __future__ import annotations

from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.types import Capability


async def test_capabilities_are_a_frozenset_of_known_names(backend: MemoryBackend) -> None:
    # Unknown names would silently switch tests to the "field stays empty" branch.
    assert isinstance(backend.capabilities, frozenset)
    assert all(isinstance(c, Capability) for c in backend.capabilities)
