"""The bench scores per-turn recall as the composition root serves it: self-hosted backends
on the calibrated scale when their model has a table, everything else on its own scale."""

from __future__ import annotations

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.calibration_tables import calibration_for
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.calibrated import CalibratedMemoryBackend
from factledger.application.memory.ports import Embedder
from factledger.application.memory.topics import AskedTopicMemoryBackend
from factledger.bench.backends import TRAITS, OpenedBackend, as_served
from factledger.bench.caching_embedder import CachingEmbedder
from factledger.testing.manual_clock import ManualClock


def _opened(name: str, embedder: Embedder) -> OpenedBackend:
    inner = InMemoryMemoryBackend(extractor=RuleExtractor(), embedder=embedder, clock=ManualClock())
    return OpenedBackend(name, inner, TRAITS[name])


def test_a_self_hosted_backend_on_the_packaged_model_is_scored_calibrated() -> None:
    embedder = OnnxEmbedder()
    opened = _opened("in-memory", embedder)
    backend, scale = as_served(opened, CachingEmbedder(embedder))
    assert scale == "calibrated"
    assert isinstance(backend, CalibratedMemoryBackend)
    # Under the calibration, as the composition root: searches carry what they ask about.
    assert isinstance(backend.inner, AskedTopicMemoryBackend)
    assert backend.inner.inner is opened.backend
    assert backend.calibration == calibration_for(embedder.files)


def test_a_model_without_a_table_or_a_hosted_backend_stays_raw() -> None:
    hashing = HashingEmbedder()
    opened = _opened("in-memory", hashing)
    served, scale = as_served(opened, CachingEmbedder(hashing))
    assert scale == "raw"
    assert isinstance(served, AskedTopicMemoryBackend)
    assert served.inner is opened.backend
    onnx = OnnxEmbedder()
    hosted = _opened("supermemory-sim", onnx)
    assert as_served(hosted, CachingEmbedder(onnx)) == (hosted.backend, "raw")
