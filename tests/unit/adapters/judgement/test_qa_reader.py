"""The one-pass QA reader of fields (ADR 0107): its pinned file, a known line read to its field
and value, a line that states nothing read as none, and its inputs as the lab trains on them."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from factledger.adapters.embedding.onnx.model_files import TOKENIZER
from factledger.adapters.judgement.qa_reader.inputs import MARKER, line_windows
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    QaFieldReader,
    QaReaderIntegrityError,
    agent_lines,
    subject_lines,
)
from factledger.domain.transcript import Message, Role

SALARY_ASKED = (
    Message(Role.AGENT, "What salary are you hoping for?"),
    Message(Role.SUBJECT, "I'm hoping for around 25,000 cedis a month."),
)
FIELDS = ("name", "job_title", "employer", "salary_expectation", "notice_period", "location")


@pytest.fixture(scope="module")
def reader() -> QaFieldReader:
    return QaFieldReader.packaged()


def test_a_file_that_differs_from_its_pin_is_refused_naming_it(tmp_path: Path) -> None:
    copy = tmp_path / "qa-reader.onnx"
    shutil.copyfile(PACKAGED_QA_READER, copy)

    with pytest.raises(QaReaderIntegrityError, match=r"qa-reader\.onnx: sha256 differs"):
        QaFieldReader.load(copy, "0" * 64, 6.5)
    with pytest.raises(QaReaderIntegrityError, match=r"not readable: absent\.onnx"):
        QaFieldReader.load(tmp_path / "absent.onnx", "0" * 64, 6.5)


async def test_a_stated_value_is_read_to_its_field_and_its_words(reader: QaFieldReader) -> None:
    said = [
        Message(Role.AGENT, "What salary are you hoping for?"),
        Message(Role.SUBJECT, "I'm hoping for around 25,000 cedis a month."),
    ]

    found = await reader.field_statements(said, FIELDS)

    best = max(found, key=lambda s: s.p)
    assert (best.message_index, best.field, best.clause) == (
        1,
        "salary_expectation",
        "around 25,000 cedis a month",
    )
    assert best.p >= reader.floor


async def test_a_line_that_states_nothing_is_read_as_no_value(reader: QaFieldReader) -> None:
    said = [
        Message(Role.AGENT, "Anything else I can help with today?"),
        Message(Role.SUBJECT, "No, that's all, thanks a lot!"),
    ]

    assert await reader.field_statements(said, FIELDS) == []
    assert await reader.field_statements(said, ()) == []


async def test_a_kind_with_many_fields_is_read_in_groups_that_fit_the_encoder(
    reader: QaFieldReader,
) -> None:
    many = [*FIELDS, *(f"extra_field_{n}" for n in range(60))]  # about 300 tokens of fields
    said = [
        Message(Role.AGENT, "What salary are you hoping for?"),
        Message(Role.SUBJECT, "I'm hoping for around 25,000 cedis a month."),
    ]

    found = await reader.field_statements(said, many)

    best = max(found, key=lambda s: s.p)
    assert best.field == "salary_expectation"
    assert "25,000 cedis a month" in best.clause


def test_only_the_subjects_lines_are_read_each_after_the_line_before_it() -> None:
    said = [
        Message(Role.SUBJECT, "Hi"),
        Message(Role.AGENT, "Where are you based?"),
        Message(Role.SUBJECT, "Accra"),
        Message(Role.SUBJECT, "  "),
    ]

    lines = subject_lines(said)

    assert [(x.index, x.text, x.agent) for x in lines] == [
        (0, "Hi", ""),
        (2, "Accra", "Where are you based?"),
    ]


def test_a_read_back_reads_the_last_sentence_of_the_agents_lines_asked_alone() -> None:
    said = [
        Message(Role.AGENT, "I've opened claim 448. Is this number best for you?"),
        Message(Role.SUBJECT, "Yes."),
        Message(Role.AGENT, "So, Premium now?"),
    ]

    lines = agent_lines(said, {0, 1, 2, 7})

    assert [(x.index, x.text, x.agent) for x in lines] == [
        (0, "Is this number best for you?", ""),
        (2, "So, Premium now?", ""),
    ]


def test_every_field_asks_with_its_marker_and_words_before_the_line() -> None:
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    tokenizer.no_truncation()

    (window,) = line_windows(tokenizer, ["job_title", "name"], "I am a nurse", "Your job?")

    marker = tokenizer.token_to_id(MARKER)
    assert [window.ids[m] for m in window.markers] == [marker, marker]
    assert [len(p) for p in window.field_positions()] == [3, 2]  # [F] job title, [F] name
    line = window.ids[window.first_line_token : window.first_line_token + len(window.offsets)]
    assert tokenizer.decode(list(line)) == "i am a nurse"
    assert window.types[window.first_line_token - 1 : window.first_line_token + 1] == (0, 1)


async def test_a_list_fields_answers_clear_the_list_floor_and_the_others_the_floor(
    reader: QaFieldReader,
) -> None:
    said = SALARY_ASKED
    found = await reader.field_statements(said, FIELDS)  # the graph is built: copies share it
    strict = replace(reader, list_floor=99.0)

    as_list = await strict.field_statements(said, FIELDS, lists={"salary_expectation"})
    as_single = await strict.field_statements(said, FIELDS)

    assert "salary_expectation" in {s.field for s in found}
    assert "salary_expectation" not in {s.field for s in as_list}
    assert as_single == found


async def test_a_held_single_fields_answers_clear_the_held_floor_a_held_lists_its_own(
    reader: QaFieldReader,
) -> None:
    said = SALARY_ASKED
    found = await reader.field_statements(said, FIELDS)
    strict = replace(reader, held_floor=99.0)

    as_held = await strict.field_statements(said, FIELDS, held={"salary_expectation"})
    as_held_list = await strict.field_statements(
        said, FIELDS, lists={"salary_expectation"}, held={"salary_expectation"}
    )

    assert "salary_expectation" not in {s.field for s in as_held}
    assert await strict.field_statements(said, FIELDS) == found
    assert as_held_list == await strict.field_statements(said, FIELDS, lists={"salary_expectation"})
