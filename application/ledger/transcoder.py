"""The library's JSON transcoder, decoding through orjson where that gives the same value.

The library decodes a stored event with the standard library's pure-Python `object_hook`
path: every JSON object of the state goes through a Python call that looks for the
`{"_type_": ..., "_data_": ...}` form of a typed value (a UUID, a datetime, a decimal).
That was a fifth of a projection rebuild's CPU. Our events keep their typed values at the
top level of the state (payloads hold JSON-safe values only, `domain.events`), so this
transcoder parses with orjson and converts the typed values it finds there.

It gives exactly the library's result or falls back to the library's decoder:

- text the standard library reads differently (`json_text`: long integer literals) or that
  orjson refuses (NaN, lone surrogate escapes) goes to the library's decoder;
- a state whose text spells `"_type_"` more often than it has typed values at its top level
  (a typed value nested deeper, or a user's dict with that key) goes to the library's
  decoder, which decides what each one is. A quote inside a JSON string is escaped, so text
  a user wrote cannot spell it.

Encoding is the library's, unchanged: the stored format is the same either way.
"""

from __future__ import annotations

from typing import Any

import orjson
from eventsourcing.persistence import JSONTranscoder

from factledger.application.json_text import has_long_digits

_TYPED_KEY = b'"_type_"'


class TopLevelJSONTranscoder(JSONTranscoder):
    """`JSONTranscoder` whose `decode` converts typed values at the state's top level only,
    and hands anything else to the library's decoder."""

    def decode(self, data: bytes) -> Any:
        if has_long_digits(data):
            return super().decode(data)
        try:
            state = orjson.loads(data)
        except orjson.JSONDecodeError:
            return super().decode(data)
        spelled = data.count(_TYPED_KEY)
        if spelled and (not isinstance(state, dict) or self._convert_top_level(state) != spelled):
            return super().decode(data)
        return state

    def _convert_top_level(self, state: dict[str, Any]) -> int:
        """Replaces the typed values among `state`'s values; returns how many it replaced."""
        converted = 0
        for name, value in state.items():
            if type(value) is dict and len(value) == 2 and "_type_" in value:
                transcoding = self.names.get(value["_type_"])
                if transcoding is None or "_data_" not in value:
                    return -1  # the library's decoder names what is wrong
                state[name] = transcoding.decode(value["_data_"])
                converted += 1
        return converted
