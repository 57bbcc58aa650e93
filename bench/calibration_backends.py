"""The calibration checked through each backend's own search, not only on paper.

Each held-out question gets a namespace holding exactly its labelled facts (ingested through
the backend's extraction path, with a scripted extractor that returns those facts), and is
searched with the product's defaults (memories, threshold 0.55). What comes back is scored
against the labels, so the figures compare with `calibrate_model`'s: the self-hosted backends
go through `CalibratedMemoryBackend` as the composition root wires them; the Supermemory
adapter (against the local server, which scores with our embedder's raw cosine) does not.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factledger.application.memory.calibrated import CalibratedMemoryBackend
from factledger.application.memory.calibration import Calibration, LabelledPair, Retrieval
from factledger.application.memory.ports import Embedder, MemoryBackend
from factledger.application.memory.types import namespace
from factledger.bench.backends import CALIBRATED_BACKENDS, BenchEnvironment, open_backend
from factledger.bench.caching_embedder import CachingEmbedder
from factledger.bench.calibration import THRESHOLD
from factledger.bench.calibration_scores import WHEN, ingest_facts, search_texts
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor


@dataclass(frozen=True, slots=True)
class BackendFigures:
    backend: str
    scale: str  # "calibrated" or "raw"
    figures: Retrieval


async def through_backends(
    embedder: Embedder,
    calibration: Calibration,
    asked: Sequence[Sequence[LabelledPair]],
    backends: Sequence[str],
) -> list[BackendFigures]:
    cached = CachingEmbedder(embedder)
    results = []
    with tempfile.TemporaryDirectory(prefix="factledger-calibration-") as workdir:
        extractor = ScriptedExtractor()
        env = BenchEnvironment(
            cached, extractor, ManualClock(WHEN), Path(workdir), uuid.uuid4().hex[:8], None
        )
        try:
            for name in backends:
                async with open_backend(name, env) as opened:
                    backend = opened.backend
                    calibrated = name in CALIBRATED_BACKENDS
                    if calibrated:
                        backend = CalibratedMemoryBackend(backend, calibration)
                    figures = await _search_all(backend, extractor, asked, name)
                    results.append(
                        BackendFigures(name, "calibrated" if calibrated else "raw", figures)
                    )
        finally:
            await env.close()
    return results


async def _search_all(
    backend: MemoryBackend,
    extractor: ScriptedExtractor,
    asked: Sequence[Sequence[LabelledPair]],
    backend_name: str,
) -> Retrieval:
    kept = hits = relevant = pairs = 0
    for n, facts in enumerate(asked):
        ns = namespace(f"cal-{backend_name.replace('-', '')}-{n}")
        await ingest_facts(backend, extractor, ns, facts)
        # Every fact above the threshold, so the figures compare with the pairs' (recall's own
        # limit of 3 would cut a question with more relevant facts).
        question = facts[0].question
        returned = await search_texts(backend, ns, question, threshold=THRESHOLD, facts=len(facts))
        labels = {p.fact: p.relevant for p in facts}
        kept += len(returned)
        hits += sum(1 for text in returned if labels.get(text))
        relevant += sum(labels.values())
        pairs += len(facts)
    return Retrieval(
        threshold=THRESHOLD,
        precision=hits / kept if kept else 0.0,
        recall=hits / relevant if relevant else 0.0,
        pairs=pairs,
        relevant=relevant,
        kept=kept,
    )
