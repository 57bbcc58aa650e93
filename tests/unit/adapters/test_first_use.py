"""Graphs a served process builds at their first use, which a worker builds before its first
item (ADR 0246): every live build runs once, one that registers while they run too, a dropped
reader is not kept alive for it, and a build that fails is logged by its type and left to its
first use, which meets the error as before. The packaged QA reader's and span verifier's
graphs register themselves."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import structlog

from factledger.adapters import first_use
from factledger.adapters.first_use import build_first_use_graphs, built_at_first_use
from factledger.adapters.judgement.cross_answers import CrossAnswerJudge
from factledger.adapters.judgement.forget_reader import (
    PACKAGED_FORGET_READER,
    PACKAGED_FORGET_READER_SHA256,
)
from factledger.adapters.judgement.qa_reader.reader import QaFieldReader
from factledger.adapters.judgement.span_verifier import PinnedVerifier
from factledger.application.errors import ModelUnavailableError


@pytest.fixture(autouse=True)
def no_builds_but_these(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(first_use, "_BUILDS", [])


class Graph:
    def __init__(self, name: str, built: list[str], *, fails: bool = False) -> None:
        self.name, self.built, self.fails = name, built, fails
        built_at_first_use(self.build, name)

    def build(self) -> None:
        if self.fails:
            raise OSError("the disk said no about /private/path/secret-word")
        self.built.append(self.name)


class MakesAnother(Graph):
    def build(self) -> None:
        super().build()
        self.made = Graph("made while building", self.built)


def test_every_live_build_runs_once() -> None:
    built: list[str] = []
    graphs = [Graph("one", built), Graph("two", built)]

    assert build_first_use_graphs() == []

    assert built == ["one", "two"]
    assert len(graphs) == 2


def test_a_build_registered_while_the_builds_run_is_built_too() -> None:
    built: list[str] = []
    graph = MakesAnother("verifier", built)

    build_first_use_graphs()

    assert built == ["verifier", "made while building"]
    assert graph.made.built is built


def test_a_dropped_reader_is_neither_kept_alive_nor_built() -> None:
    built: list[str] = []
    Graph("dropped", built)
    gc.collect()

    build_first_use_graphs()

    assert built == []
    assert first_use._BUILDS == [] or all(ref() is None for _, ref in first_use._BUILDS)


def test_a_failing_build_is_logged_by_its_type_and_the_others_still_build() -> None:
    built: list[str] = []
    graphs = [Graph("broken", built, fails=True), Graph("fine", built)]

    with structlog.testing.capture_logs() as logs:
        failed = build_first_use_graphs()

    assert failed == ["broken"]
    assert built == ["fine"]
    assert logs == [
        {
            "event": "model.warm_up_failed",
            "model": "broken",
            "error": "OSError",
            "log_level": "warning",
        }
    ]
    assert "secret-word" not in repr(logs)
    assert len(graphs) == 2


def test_the_qa_readers_graph_is_built_by_the_warm_up() -> None:
    reader = QaFieldReader.packaged()
    assert reader._loaded is None

    assert build_first_use_graphs() == []

    assert reader._loaded is not None
    assert reader.model == b""  # its session holds the graph


def test_a_qa_reader_whose_graph_cannot_be_built_fails_its_first_reading_as_before() -> None:
    reader = QaFieldReader(b"not a graph", floor=5.0)

    with structlog.testing.capture_logs() as logs:
        assert build_first_use_graphs() == ["qa_reader"]

    # The child that prepares the graph fails first, then the preparation in process.
    assert [log["event"] for log in logs] == ["model.compile_apart_failed", "model.warm_up_failed"]
    with pytest.raises(Exception) as raised:
        reader._ready()
    assert type(raised.value).__name__ == logs[1]["error"] == logs[0]["error"]


def test_the_span_verifiers_graph_and_its_cross_encoder_are_built_by_the_warm_up() -> None:
    verifier = PinnedVerifier(PACKAGED_FORGET_READER, PACKAGED_FORGET_READER_SHA256)
    assert not verifier._loading.done()

    assert build_first_use_graphs() == []

    assert verifier._loading.done()
    graph = verifier._loading.result().graph
    assert isinstance(graph, CrossAnswerJudge)
    assert graph._loaded is not None


def test_a_verifier_whose_file_went_bad_is_left_to_its_first_reading(tmp_path: Path) -> None:
    graph = tmp_path / "verifier.onnx"
    graph.write_bytes(PACKAGED_FORGET_READER.read_bytes())
    verifier = PinnedVerifier(graph, PACKAGED_FORGET_READER_SHA256)
    graph.write_bytes(b"replaced after the start")

    assert build_first_use_graphs() == ["span_verifier"]

    with pytest.raises(ModelUnavailableError):
        verifier.log_odds_sync([("home address", "We moved to [Elm Street]")])
