"""Rules every memory backend follows the same way: input validation and deterministic ids.

`ValidatingMemoryBackend` applies the validation at the port boundary, so that a bad request
fails identically (with `InvalidMemoryInputError`) whatever engine sits behind the port.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime

from factledger.application.errors import InvalidMemoryInputError
from factledger.application.memory.types import (
    MAX_LIMIT,
    METADATA_KEY_PATTERN,
    AllOf,
    AnyOf,
    Condition,
    Filter,
    FilterOp,
    Metadata,
    MetadataValue,
    Namespace,
    SearchQuery,
    namespace,
)
from factledger.domain.errors import InvalidValueError
from factledger.domain.text import UNSAFE_TEXT_RULE, check_json_text, is_safe_text
from factledger.domain.transcript import Message

# Record and document ids travel as Supermemory `customId`s too, so they keep to its alphabet.
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")
MAX_QUERY_CHARS = 4_000
MAX_REASON_CHARS = 500
MAX_FILTER_DEPTH = 5
_RANGE_OPS = frozenset({FilterOp.GT, FilterOp.GTE, FilterOp.LT, FilterOp.LTE})


def validate_namespace(value: str) -> Namespace:
    """Returns the namespace or raises `InvalidMemoryInputError`."""
    return namespace(value)


def validate_id(field: str, value: str) -> str:
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidMemoryInputError(field, "must match ^[A-Za-z0-9_.:-]{1,100}$")
    return value


def validate_ids(field: str, values: Sequence[str]) -> None:
    for value in values:
        validate_id(field, value)


def validate_reason(reason: str) -> str:
    """A forget reason: 1 to `MAX_REASON_CHARS` characters, not blank."""
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON_CHARS:
        raise InvalidMemoryInputError("reason", f"must be 1 to {MAX_REASON_CHARS} characters")
    return validate_text("reason", reason)


def validate_aware(field: str, value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidMemoryInputError(field, "must be timezone-aware")
    return value


def validate_ingest(
    namespace: str,
    document_id: str,
    transcript: Sequence[Message],
    occurred_at: datetime,
    metadata: Metadata | None,
) -> tuple[Namespace, dict[str, MetadataValue]]:
    """Checks one `ingest_transcript` call; every backend refuses the same inputs alike."""
    ns = validate_namespace(namespace)
    validate_id("document_id", document_id)
    validate_aware("occurred_at", occurred_at)
    meta = validate_metadata(metadata)
    if not transcript or not all(isinstance(m, Message) for m in transcript):
        raise InvalidMemoryInputError("transcript", "must be a non-empty list of messages")
    for index, message in enumerate(transcript):
        validate_text(f"transcript[{index}].text", message.text)
    return ns, meta


def validate_text(field: str, text: str) -> str:
    """Text every engine can store: PostgreSQL refuses NUL, UTF-8 refuses lone surrogates."""
    if not is_safe_text(text):
        raise InvalidMemoryInputError(field, UNSAFE_TEXT_RULE)
    return text


def validate_json_body(body_json: str) -> str:
    """A record body must be one JSON document; it is stored byte for byte, never re-encoded."""
    try:
        parsed = json.loads(body_json)
    except (TypeError, ValueError) as exc:
        raise InvalidMemoryInputError("body_json", "must be valid JSON") from exc
    validate_text("body_json", body_json)
    try:
        check_json_text(parsed, "body_json")
    except InvalidValueError:
        raise InvalidMemoryInputError("body_json", UNSAFE_TEXT_RULE) from None
    return body_json


def validate_search_text(search_text: str) -> str:
    """A record's search text: safe text with at least one non-blank character (a record is
    always findable by something)."""
    if not isinstance(search_text, str) or not search_text.strip():
        raise InvalidMemoryInputError("search_text", "must not be blank")
    return validate_text("search_text", search_text)


def validate_metadata(metadata: Metadata | None) -> dict[str, MetadataValue]:
    """Checks keys and value types; returns a plain copy the caller may keep."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidMemoryInputError("metadata", "must be a mapping")
    copy: dict[str, MetadataValue] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not METADATA_KEY_PATTERN.fullmatch(key):
            raise InvalidMemoryInputError("metadata", "keys must match ^[A-Za-z0-9_.-]{1,64}$")
        copy[key] = _validate_value("metadata", value)
    return copy


def _validate_value(field: str, value: object) -> MetadataValue:
    if isinstance(value, str):
        return validate_text(field, value)
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMemoryInputError(field, "numbers must be finite")
        return value
    if isinstance(value, tuple | list) and all(isinstance(item, str) for item in value):
        return tuple(validate_text(field, item) for item in value)
    raise InvalidMemoryInputError(field, "values must be str, int, float, bool or a list of str")


def validate_search_query(query: SearchQuery) -> SearchQuery:
    """Rejects an empty or oversized query, a limit outside 1..100 and a threshold outside 0..1."""
    if not isinstance(query.text, str) or not query.text.strip():
        raise InvalidMemoryInputError("query", "must not be empty")
    if len(query.text) > MAX_QUERY_CHARS:
        raise InvalidMemoryInputError("query", f"must be at most {MAX_QUERY_CHARS} characters")
    validate_text("query", query.text)
    if isinstance(query.limit, bool) or not isinstance(query.limit, int):
        raise InvalidMemoryInputError("limit", "must be an integer")
    if not 1 <= query.limit <= MAX_LIMIT:
        raise InvalidMemoryInputError("limit", f"must be between 1 and {MAX_LIMIT}")
    threshold = query.threshold
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not math.isfinite(threshold)
        or not 0.0 <= threshold <= 1.0
    ):
        raise InvalidMemoryInputError("threshold", "must be a number between 0 and 1")
    if query.filters is not None:
        validate_filter(query.filters)
    return query


def validate_filter(node: Filter, depth: int = 0) -> None:
    if depth > MAX_FILTER_DEPTH:
        raise InvalidMemoryInputError("filters", f"must nest at most {MAX_FILTER_DEPTH} levels")
    match node:
        case Condition(key=key, op=op, value=value):
            if not isinstance(key, str) or not METADATA_KEY_PATTERN.fullmatch(key):
                raise InvalidMemoryInputError("filters", "keys must match ^[A-Za-z0-9_.-]{1,64}$")
            _validate_condition(op, _validate_value("filters", value))
        case AllOf(operands=operands) | AnyOf(operands=operands):
            if not operands:
                raise InvalidMemoryInputError("filters", "and/or need at least one operand")
            for operand in operands:
                validate_filter(operand, depth + 1)
        case _:
            raise InvalidMemoryInputError("filters", "must be a Condition, AllOf or AnyOf")


def _validate_condition(op: FilterOp, value: MetadataValue) -> None:
    if op is FilterOp.IN and not isinstance(value, tuple):
        raise InvalidMemoryInputError("filters", "'in' takes a list of values")
    if op is FilterOp.ARRAY_CONTAINS and not isinstance(value, str):
        raise InvalidMemoryInputError("filters", "'array_contains' takes one string")
    if op in _RANGE_OPS and (isinstance(value, bool | tuple)):
        raise InvalidMemoryInputError("filters", "ranges take a number or a string")


def validate_limit(limit: int, offset: int = 0) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidMemoryInputError("limit", f"must be between 1 and {MAX_LIMIT}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidMemoryInputError("offset", "must be a non-negative integer")


def derive_memory_id(namespace: Namespace, document_id: str, fact_key: str) -> str:
    """A stable memory id, so re-ingesting after a crash can never duplicate a fact."""
    digest = hashlib.sha256(f"{namespace}\x1f{document_id}\x1f{fact_key}".encode()).hexdigest()
    return f"mem_{digest[:24]}"
