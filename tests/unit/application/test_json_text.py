"""`application.json_text`: orjson's speed, the standard library's answers."""

from __future__ import annotations

import json

import pytest

from factledger.application.json_text import dumps_sorted, loads

SAMPLES = [
    {"b": 1, "a": [1.5, -0.0, 2**53, None, True], "é": 'Grüße 👋 "q"\n'},
    {"big": 2**64, "bigger": -(10**30), "digits": "1234567890123456789012"},
    {"nested": {"z": {}, "y": []}, "n": 123456789012345678},
]


@pytest.mark.parametrize("value", SAMPLES)
def test_text_reads_back_as_the_standard_library_reads_it(value: object) -> None:
    text = dumps_sorted(value)
    assert loads(text) == json.loads(text) == value
    assert loads(text.encode()) == value


def test_integers_past_64_bits_stay_integers() -> None:
    assert loads('{"n": 123456789012345678901234567890}') == {"n": 123456789012345678901234567890}
    assert loads(b"[18446744073709551616]") == [2**64]
    assert dumps_sorted({"n": 2**70}) == '{"n": 1180591620717411303424}'


def test_what_orjson_refuses_is_read_by_the_standard_library() -> None:
    assert loads('"\\ud800"') == "\ud800"
    assert loads(b'{"x": NaN}')["x"] != loads(b'{"x": NaN}')["x"]  # NaN, as json reads it
    assert dumps_sorted({"s": "\ud800"}) == '{"s": "\\ud800"}'


def test_keys_are_sorted() -> None:
    assert dumps_sorted({"b": 1, "a": {"d": 1, "c": 2}}) == '{"a":{"c":2,"d":1},"b":1}'
