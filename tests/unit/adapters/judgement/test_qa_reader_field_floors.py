"""The QA reader's floor per field (ADR 0152): the pinned file and the bar each field reads from."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from factledger.adapters.judgement.qa_reader.field_floors import FieldFloors, FieldFloorsError
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_SHA256,
    QaFieldReader,
    QaReaderIntegrityError,
)

FLOORS = FieldFloors("0" * 64, single={"name": 3.5, "policy_type": 7.5}, lists={"skills": 3.0})
READER = QaFieldReader(b"", floor=5.5, list_floor=6.0, held_floor=4.5, field_floors=FLOORS)


def written(tmp_path: Path, body: object) -> tuple[Path, str]:
    path = tmp_path / "floors.json"
    path.write_text(json.dumps(body))
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_field_with_a_floor_of_its_own_reads_from_it_and_any_other_from_its_kinds() -> None:
    assert READER.floor_of("name", lists=()) == 3.5
    assert READER.floor_of("policy_type", lists=()) == 7.5
    assert READER.floor_of("skills", lists={"skills"}) == 3.0
    assert READER.floor_of("email", lists=()) == 5.5
    assert READER.floor_of("must_haves", lists={"must_haves"}) == 6.0


def test_a_single_fields_floor_is_not_a_list_fields_of_the_same_name() -> None:
    assert READER.floor_of("name", lists={"name"}) == 6.0
    assert READER.floor_of("skills", lists=()) == 5.5


def test_a_held_field_reads_from_the_lower_of_its_own_floor_and_the_held_one() -> None:
    assert READER.floor_of("name", lists=(), held={"name"}) == 3.5
    assert READER.floor_of("policy_type", lists=(), held={"policy_type"}) == 4.5
    assert READER.floor_of("policy_type", lists=(), held={"policy_type"}, held_floor=1.0) == 1.0


def test_without_field_floors_every_field_reads_from_its_kinds_floor() -> None:
    plain = QaFieldReader(b"", floor=5.5, list_floor=6.0, held_floor=4.5)

    assert plain.floor_of("name", lists=()) == 5.5
    assert plain.floor_of("skills", lists={"skills"}) == 6.0


def test_a_floors_file_is_read_back_as_it_was_written(tmp_path: Path) -> None:
    path, sha256 = written(
        tmp_path, {"reader_sha256": "0" * 64, "single": {"name": 3.5}, "lists": {"skills": 3}}
    )

    floors = FieldFloors.load(path, sha256)

    assert floors.reader_sha256 == "0" * 64
    assert floors.of("name", is_list=False) == 3.5
    assert floors.of("skills", is_list=True) == 3.0
    assert floors.of("skills", is_list=False) is None


def test_a_floors_file_that_differs_from_its_pin_is_refused(tmp_path: Path) -> None:
    path, _ = written(tmp_path, {"reader_sha256": "0" * 64, "single": {"name": 3.5}})

    with pytest.raises(FieldFloorsError, match="differs from the pin"):
        FieldFloors.load(path, "1" * 64)


@pytest.mark.parametrize(
    "body",
    [
        {"single": {"name": 3.5}},
        {"reader_sha256": "0" * 64, "single": {"name": "low"}},
        {"reader_sha256": "0" * 64, "lists": {"skills": 99}},
        ["name", 3.5],
    ],
)
def test_a_file_that_is_not_a_floors_file_is_refused(tmp_path: Path, body: object) -> None:
    path, sha256 = written(tmp_path, body)

    with pytest.raises(FieldFloorsError):
        FieldFloors.load(path, sha256)


def test_a_reader_refuses_floors_fitted_for_another_reader_file() -> None:
    with pytest.raises(QaReaderIntegrityError, match="another reader"):
        QaFieldReader.load(PACKAGED_QA_READER, PACKAGED_QA_READER_SHA256, 5.5, field_floors=FLOORS)
