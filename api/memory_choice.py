"""Choosing a memory backend from the command line, until backend settings land in `Settings`.

`--backend in-memory` (process memory: dev and single-process demos) or `--backend pgvector`
(the embedded server or `DATABASE_URL`, schema `factledger_memory`); `--embedder onnx` (the
default, MiniLM int8 shipped in a package) or `hashing` (lexical, for tests and demos).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from enum import StrEnum

from factledger.adapters.hashing_embedder import HashingEmbedder
from factledger.adapters.in_memory_backend import InMemoryMemoryBackend
from factledger.adapters.onnx_embedder import OnnxEmbedder
from factledger.adapters.pgvector_backend import PgvectorMemoryBackend
from factledger.adapters.pgvector_config import embedded_config
from factledger.adapters.rule_extractor import RuleExtractor
from factledger.api.recall_bootstrap import postgres_location
from factledger.api.settings import Settings
from factledger.application.ports import Clock, Embedder, MemoryBackend


class BackendChoice(StrEnum):
    IN_MEMORY = "in-memory"
    PGVECTOR = "pgvector"


class EmbedderChoice(StrEnum):
    ONNX = "onnx"
    HASHING = "hashing"


def build_embedder(choice: EmbedderChoice) -> Embedder:
    return OnnxEmbedder() if choice is EmbedderChoice.ONNX else HashingEmbedder()


async def open_backend(
    choice: BackendChoice,
    embedder: Embedder,
    settings: Settings,
    clock: Clock,
    stack: AsyncExitStack,
) -> MemoryBackend:
    """Opens the chosen backend with the rule extractor; closed when `stack` closes."""
    backend: MemoryBackend
    if choice is BackendChoice.PGVECTOR:
        config = embedded_config(postgres_location(settings, stack))
        backend = await PgvectorMemoryBackend.open(
            config, embedder=embedder, extractor=RuleExtractor(), clock=clock
        )
    else:
        backend = InMemoryMemoryBackend(extractor=RuleExtractor(), embedder=embedder, clock=clock)
    stack.push_async_callback(backend.close)
    return backend
