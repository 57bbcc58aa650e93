"""Backends for the bench's own tests: the real in-memory one, and a deliberately broken one."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.clocks import SystemClock
from factledger.application.memory.types import Namespace


class OneNamespaceBackend:
    """Stores every namespace's data in one: isolation broken on purpose, to prove the
    benchmark's leak check can fail."""

    def __init__(self, inner: InMemoryMemoryBackend) -> None:
        self.inner = inner
        self.name = "one-namespace"

    def __getattr__(self, attribute: str) -> Any:
        method = getattr(self.inner, attribute)

        async def shared(namespace: Namespace, *args: Any, **kwargs: Any) -> Any:
            return await method(Namespace("shared"), *args, **kwargs)

        return shared


def in_memory_backend() -> InMemoryMemoryBackend:
    return InMemoryMemoryBackend(
        extractor=RuleExtractor(), embedder=HashingEmbedder(), clock=SystemClock()
    )


@pytest.fixture
def backend() -> InMemoryMemoryBackend:
    return in_memory_backend()


@pytest.fixture
def leaky_backend() -> OneNamespaceBackend:
    return OneNamespaceBackend(in_memory_backend())
