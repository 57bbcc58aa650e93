"""The packaged QA reader read as whether a request to forget speaks of a field (ADR 0218):
the field the request concerns is read well over the packaged bar, a field it does not
concern well under it, although neither states a value a floor would propose."""

from __future__ import annotations

import asyncio

import pytest

from factledger.adapters.judgement.qa_reader.mentions import (
    PACKAGED_MENTION_FLOOR,
    QaFieldMentions,
)
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER_FLOOR,
    QaFieldReader,
)

ALLERGY = "Please delete that bit about me being allergic to ibuprofen."
KNEES = "And please, strike what I told you about my knees from your notes."
# Fields are read together, each weighed against the others: as a kind's whole list.
PATIENT = [
    *("name", "date_of_birth", "allergies", "medications", "insurer", "primary_physician"),
    *("chief_complaint", "diet", "emergency_contact", "preferred_pharmacy", "smoking_status"),
]
HOME_BUYER = [
    *("name", "budget", "preferred_area", "bedrooms", "mortgage_status", "move_by_date"),
    *("current_housing", "household_size", "must_haves", "deal_breakers"),
]


@pytest.fixture(scope="module")
def mentions() -> QaFieldMentions:
    return QaFieldMentions(QaFieldReader.packaged(), PACKAGED_MENTION_FLOOR)


def test_the_field_a_request_concerns_is_spoken_of_and_a_far_one_is_not(
    mentions: QaFieldMentions,
) -> None:
    spoken = dict(zip(PATIENT, asyncio.run(mentions.speaks_of(ALLERGY, PATIENT)), strict=True))
    assert spoken["allergies"]
    assert not spoken["date_of_birth"]
    knees = dict(zip(HOME_BUYER, asyncio.run(mentions.speaks_of(KNEES, HOME_BUYER)), strict=True))
    assert not knees["bedrooms"]


def test_margins_are_under_the_floor_that_proposes_and_in_the_fields_order(
    mentions: QaFieldMentions,
) -> None:
    margins = dict(zip(PATIENT, mentions.margins_sync(ALLERGY, PATIENT), strict=True))
    assert PACKAGED_MENTION_FLOOR <= margins["allergies"] < PACKAGED_QA_READER_FLOOR
    assert margins["date_of_birth"] < PACKAGED_MENTION_FLOOR
    assert margins["allergies"] > margins["date_of_birth"] + 10


def test_nothing_to_read_speaks_of_nothing(mentions: QaFieldMentions) -> None:
    assert asyncio.run(mentions.speaks_of(ALLERGY, [])) == []
    assert asyncio.run(mentions.speaks_of("  ", ["allergies"])) == [False]
