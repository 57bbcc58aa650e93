"""A line's reading should be its own (ADR 0155): the shipped int8 reader quantises each
layer's activations over the whole batch it is given, so a line read alone and read inside a
session of other lines gets other margins. By default the product still batches a session's
windows, so the test is kept for the default, marked as the known defect: strict, it fails the
day a change makes the default reading its own. Read each window alone (ADR 0156's setting),
the same test passes."""

from __future__ import annotations

import pytest
from tokenizers import Tokenizer

from factledger.adapters.embedding.onnx.model_files import TOKENIZER
from factledger.adapters.judgement.qa_reader.inputs import line_windows
from factledger.adapters.judgement.qa_reader.reader import FieldAnswer, LineRead, QaFieldReader

FIELDS = ("name", "job_title", "employer", "salary_expectation", "notice_period", "location")
LINE = LineRead(0, "I'm hoping for around 25,000 cedis a month.", "What salary are you hoping for?")
# Lines beside it in one session: two whose windows have exactly its number of tokens (so
# that batching by equal length alone would still put them with it), and others of their own.
BESIDE = (
    LineRead(1, "I'm hoping for around 25,000 cedis a week.", "What salary are you hoping for?"),
    LineRead(2, "I'm hoping for around 30,000 cedis a year.", "What salary are you hoping for?"),
    LineRead(3, "My name is Ama Owusu and I live in Kumasi now.", "Who am I speaking with?"),
    LineRead(4, "I've been a senior nurse at Korle Bu Teaching Hospital for six years.", ""),
    LineRead(5, "Thanks!", "Anything else?"),
    LineRead(6, "I would need to give my current employer one month of notice first.", ""),
)


@pytest.fixture(scope="module")
def reader() -> QaFieldReader:
    return QaFieldReader.packaged()


@pytest.fixture(scope="module")
def reader_alone() -> QaFieldReader:
    return QaFieldReader.packaged(alone=True)


def window_lengths(lines: tuple[LineRead, ...]) -> list[int]:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return [
        len(w.ids) for line in lines for w in line_windows(tokenizer, FIELDS, line.text, line.agent)
    ]


def margins_of_line(found: list[FieldAnswer], index: int) -> dict[tuple[str, int, int], float]:
    return {(a.field, a.start, a.end): a.margin for a in found if a.index == index}


def test_some_lines_beside_it_have_windows_of_exactly_its_length() -> None:
    (own,) = window_lengths((LINE,))

    assert window_lengths(BESIDE).count(own) >= 2


@pytest.mark.xfail(
    strict=True,
    reason="ADR 0155: the int8 graph quantises activations per batch; no candidate adopted",
)
def test_a_line_reads_the_same_alone_and_beside_other_lines(reader: QaFieldReader) -> None:
    assert_reads_the_same_alone_and_beside(reader)


def test_read_window_by_window_a_line_reads_the_same_alone_and_beside_other_lines(
    reader_alone: QaFieldReader,
) -> None:
    assert_reads_the_same_alone_and_beside(reader_alone)


def assert_reads_the_same_alone_and_beside(reader: QaFieldReader) -> None:
    alone = margins_of_line(reader.answers_sync([LINE], FIELDS, floor=0.0), LINE.index)
    beside = margins_of_line(reader.answers_sync([LINE, *BESIDE], FIELDS, floor=0.0), LINE.index)

    assert alone  # the salary is read at least
    assert alone.keys() == beside.keys()
    assert all(beside[k] == pytest.approx(m, abs=1e-5) for k, m in alone.items())
