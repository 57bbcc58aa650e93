"""`TopLevelJSONTranscoder` decodes exactly as the library's `JSONTranscoder`, or lets it."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    JSONTranscoder,
    TranscodingNotRegisteredError,
    UUIDAsHex,
)

from factledger.application.ledger.transcoder import TopLevelJSONTranscoder

AN_ID = UUID("0b4cbe4e-5a53-4f6e-8f5e-6d0a3e0a2d11")
AT = datetime(2026, 3, 3, 9, 30, 15, 123456, tzinfo=UTC)


def _registered(transcoder: JSONTranscoder) -> JSONTranscoder:
    for transcoding in (UUIDAsHex(), DecimalAsStr(), DatetimeAsISO()):
        transcoder.register(transcoding)
    return transcoder


LIBRARY = _registered(JSONTranscoder())
OURS = _registered(TopLevelJSONTranscoder())

STATES: list[Any] = [
    {"timestamp": AT, "change_id": AN_ID, "amount": Decimal("12.50"), "field": "budget"},
    # Typed values below the top level: the library's decoder takes these.
    {"timestamp": AT, "ids": [AN_ID, AN_ID], "by": {"at": AT}},
    # A user's dict that spells the library's keys, and a value that is the key's name.
    {"value": {"_type_": "uuid_hex", "note": "not typed"}, "text": "_type_"},
    {"value": {"_type_": "x", "_data_": "y", "z": 1}, "timestamp": AT},
    # Integers orjson would read as floats, and quoting that holds the key's spelling.
    {"big": 12345678901234567890123, "n": -9223372036854775808, "q": '"_type_"'},
    {"nested": {"deep": [1, 2.5, None, True, "\u00e9\u4e2d"]}, "timestamp": AT},
    {},
]


@pytest.mark.parametrize("state", STATES)
def test_a_state_decodes_as_the_library_decodes_it(state: dict[str, Any]) -> None:
    data = LIBRARY.encode(state)
    decoded = OURS.decode(data)
    assert decoded == LIBRARY.decode(data)
    assert [type(v) for v in decoded.values()] == [type(v) for v in LIBRARY.decode(data).values()]


@pytest.mark.parametrize(
    "data",
    [
        b'{"x": NaN}',
        b'{"x": "\\ud800"}',
        b'{"x": 1e400}',
        b'[{"_type_": "uuid_hex", "_data_": "0b4cbe4e5a534f6e8f5e6d0a3e0a2d11"}]',
        b'{"_type_": "datetime_iso", "_data_": "2026-03-03T09:30:15+00:00"}',
        b'{"a": {"_type_": "uuid_hex", "_data_": "0b4cbe4e5a534f6e8f5e6d0a3e0a2d11"}, "a": 1}',
    ],
)
def test_text_orjson_reads_otherwise_goes_to_the_library(data: bytes) -> None:
    assert repr(OURS.decode(data)) == repr(LIBRARY.decode(data))


def test_an_unknown_typed_value_fails_as_the_library_fails() -> None:
    data = b'{"a": {"_type_": "mystery", "_data_": "1"}}'
    with pytest.raises(TranscodingNotRegisteredError):
        OURS.decode(data)
