"""The lab's reader of a reply against the change it answers (ADR 0144): its text features,
its cosines over a hashing embedder, and its veto fitted on a few pairs written for this
test. No encoder is loaded."""

from __future__ import annotations

import numpy as np

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.bench.judgement.change_features import (
    ChangeItem,
    cosine_features,
    part_features,
    parts_beside_value,
    question_parts,
    text_features,
)
from factledger.bench.judgement.change_reader import fit, veto_only

PHONE = ChangeItem("Is your mobile now 07700 900312?", "yes", "phone_number", "07700 900312")
NEW_DIGITS = 2  # after the value's containment in the question and in the reply


def test_a_reply_naming_a_number_neither_the_question_nor_the_value_holds_is_marked() -> None:
    other = ChangeItem(PHONE.question, "yes but it ends 318", PHONE.field, PHONE.value)
    assert text_features(other)[NEW_DIGITS] == 0.5  # one run of two counted
    assert text_features(PHONE)[NEW_DIGITS] == 0.0


def test_a_second_question_beside_the_change_is_counted() -> None:
    two = ChangeItem("Did the remote work? Also want HBO added?", "yes", "channel", "HBO")
    assert parts_beside_value(two) == 1
    assert parts_beside_value(PHONE) == 0


async def test_a_reply_speaking_of_another_field_is_closer_to_it_than_to_its_own() -> None:
    email = ChangeItem(PHONE.question, "yes that is my email address", "phone_number", "x")
    own = ChangeItem(PHONE.question, "yes that is my phone number", "phone_number", "x")
    cos = await cosine_features(HashingEmbedder(64), [email, own], ["email_address"])
    margin = 4  # the own field's cosine less the closest other field's
    assert cos[0, margin] < 0.0 < cos[1, margin]


def test_the_asked_part_is_the_sentence_holding_the_value() -> None:
    two = ChangeItem("Did the technician come? Do you want HBO added?", "yes", "channel", "HBO")
    assert question_parts(two) == ("Do you want HBO added", ["Did the technician come"])
    assert question_parts(PHONE) == ("Is your mobile now 07700 900312", [])


async def test_a_reply_nearer_the_other_part_of_the_question_reads_below_zero() -> None:
    question = "Did the technician come round? Do you want the sports channel added?"
    other = ChangeItem(question, "yes the technician came round", "channel", "sports channel")
    asked = ChangeItem(question, "yes add the sports channel", "channel", "sports channel")
    parts = await part_features(HashingEmbedder(64), [other, asked, PHONE])
    assert parts[0, 0] < 0.0 < parts[1, 0]
    assert parts[2].tolist() == [0.0, 0.0]  # one part: no margin, no other part
    assert parts[:2, 1].tolist() == [1.0, 1.0]


def test_the_veto_is_fitted_and_its_bar_leaves_no_false_yes() -> None:
    x = np.array([[1.0, 0.0], [0.9, 0.1], [0.2, 1.0], [0.1, 0.9]], dtype=np.float32)
    head = fit(x, ["yes", "yes", "no", "neither"])
    p = head.probabilities(x)[:, head.column("yes")]
    assert p[:2].min() > p[2:].max()
    packaged = np.array([True, True, True, False])
    y = np.array([True, True, False, False])
    veto = veto_only(packaged, p, y)
    assert veto["false_yes"] == 0.0
    assert veto["yes_accepted"] > 0.0
