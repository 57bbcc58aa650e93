"""The lab's batchings of the QA reader's windows (ADR 0155): every plan runs each window
once; same-length runs hold one length; the float graph holds no activation quantiser and
reads a line the same whatever runs beside it."""

from __future__ import annotations

import onnx
import pytest

from factledger.adapters.judgement.qa_reader import reader
from factledger.adapters.judgement.qa_reader.reader import PACKAGED_QA_READER, LineRead
from factledger.bench.judgement.qa_reader.batching import PLANS
from factledger.bench.judgement.qa_reader.float_activations import float_activations

LENGTHS = [40, 37, 40, 41, 24, 40, 35, 37] * 5
FIELDS = ("name", "job_title", "salary_expectation", "location")


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_every_plan_runs_each_window_once(plan: str) -> None:
    runs = PLANS[plan](LENGTHS)

    assert sorted(i for run in runs for i in run) == list(range(len(LENGTHS)))
    assert all(0 < len(run) <= reader.BATCH for run in runs)


def test_same_length_runs_hold_one_length() -> None:
    runs = PLANS["same-length"](LENGTHS)

    assert all(len({LENGTHS[i] for i in run}) == 1 for run in runs)


def test_the_float_graph_has_no_activation_quantiser() -> None:
    graph = onnx.load_from_string(float_activations(PACKAGED_QA_READER.read_bytes())).graph

    ops = {node.op_type for node in graph.node}
    assert "DynamicQuantizeLinear" not in ops
    assert "MatMulInteger" not in ops


def test_the_float_graph_reads_a_line_the_same_beside_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reader, "session_graph", float_activations)
    qa = reader.QaFieldReader.packaged()
    line = LineRead(0, "I'm hoping for around 25,000 cedis a month.", "What salary?")
    others = [LineRead(n, f"I live in Accra and work {n} days a week.", "") for n in range(1, 9)]

    alone = {(a.field, a.start, a.end): a.margin for a in qa.answers_sync([line], FIELDS, floor=0)}
    beside = {
        (a.field, a.start, a.end): a.margin
        for a in qa.answers_sync([line, *others], FIELDS, floor=0)
        if a.index == 0
    }

    assert alone
    assert alone.keys() == beside.keys()
    assert all(beside[k] == pytest.approx(m, abs=1e-5) for k, m in alone.items())
