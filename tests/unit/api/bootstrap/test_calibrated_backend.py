"""The composition root puts a self-hosted backend on the calibrated scale when its model has
a table, and leaves it on raw similarity, with a warning, when it has none."""

from __future__ import annotations

import structlog

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.calibration_tables import calibration_for
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.api.bootstrap.backend import calibrated
from factledger.application.memory.calibrated import CalibratedMemoryBackend
from factledger.testing.manual_clock import ManualClock


def test_the_packaged_model_serves_calibrated_relevance() -> None:
    embedder = OnnxEmbedder()
    inner = InMemoryMemoryBackend(extractor=RuleExtractor(), embedder=embedder, clock=ManualClock())
    backend = calibrated(inner, embedder)
    assert isinstance(backend, CalibratedMemoryBackend)
    assert backend.calibration == calibration_for(embedder.files)
    assert backend.inner is inner


def test_an_embedder_without_a_table_stays_on_raw_similarity_and_warns() -> None:
    embedder = HashingEmbedder()
    inner = InMemoryMemoryBackend(extractor=RuleExtractor(), embedder=embedder, clock=ManualClock())
    with structlog.testing.capture_logs() as logs:
        assert calibrated(inner, embedder) is inner
    assert [(e["event"], e["log_level"]) for e in logs] == [("embedding.uncalibrated", "warning")]
