"""Compiles the port's metadata filters to SQL over a JSONB column, with bound parameters only.

Keys and values never enter the SQL text: each becomes a `%s` placeholder, and values travel as
JSON so numbers compare as numbers and strings as strings (a type guard stops jsonb's
cross-type ordering from answering `"10" > 9`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from psycopg import sql

from factledger.application.errors import InvalidMemoryInputError
from factledger.application.memory.types import (
    METADATA_KEY_PATTERN,
    AllOf,
    AnyOf,
    Condition,
    Filter,
    FilterOp,
    Metadata,
    MetadataValue,
)

MAX_FILTER_DEPTH = 8  # beyond the port's own limit; guards recursion if called unvalidated
_COMPARISONS = {FilterOp.GT: ">", FilterOp.GTE: ">=", FilterOp.LT: "<", FilterOp.LTE: "<="}


def compile_filter(node: Filter | None, column: sql.Composable) -> tuple[sql.Composable, list[Any]]:
    """Returns a boolean SQL expression over `column` (a jsonb) and its parameters."""
    if node is None:
        return sql.SQL("TRUE"), []
    params: list[Any] = []
    return _compile(node, column, params, depth=0), params


def _compile(
    node: Filter, column: sql.Composable, params: list[Any], *, depth: int
) -> sql.Composable:
    if depth > MAX_FILTER_DEPTH:
        raise InvalidMemoryInputError("filters", f"must nest at most {MAX_FILTER_DEPTH} levels")
    if isinstance(node, AllOf | AnyOf):
        if not node.operands:
            return sql.SQL("TRUE" if isinstance(node, AllOf) else "FALSE")
        joiner = sql.SQL(" AND " if isinstance(node, AllOf) else " OR ")
        parts = [_compile(child, column, params, depth=depth + 1) for child in node.operands]
        return sql.SQL("({})").format(joiner.join(parts))
    return _condition(node, column, params)


def _condition(c: Condition, column: sql.Composable, params: list[Any]) -> sql.Composable:
    """One condition; like the in-memory backend, a missing key never matches (not even `neq`),
    and values only compare with values of their own kind (`true` is not the number 1)."""
    if not METADATA_KEY_PATTERN.fullmatch(c.key):
        raise InvalidMemoryInputError("filters", "keys must match ^[A-Za-z0-9_.-]{1,64}$")
    value = sql.SQL("({} -> %s)").format(column)
    if c.op in (FilterOp.EQ, FilterOp.NEQ):
        params += [c.key, _json(c.value)]
        op = sql.SQL("=" if c.op is FilterOp.EQ else "<>")
        return sql.SQL("({} {} %s::jsonb)").format(value, op)
    if c.op in _COMPARISONS:
        op = sql.SQL(_COMPARISONS[c.op])
        if isinstance(c.value, str):
            # Code-point order, as Python compares: ISO-8601 dates sort correctly.
            params += [c.key, c.key, c.value]
            return sql.SQL(
                "(jsonb_typeof({v}) = 'string' AND ({c} ->> %s) COLLATE \"C\" {op} %s)"
            ).format(v=value, c=column, op=op)
        if isinstance(c.value, int | float) and not isinstance(c.value, bool):
            params += [c.key, c.key, c.value]
            return sql.SQL(
                "(jsonb_typeof({v}) = 'number' AND ({c} ->> %s)::numeric {op} %s::numeric)"
            ).format(v=value, c=column, op=op)
        raise InvalidMemoryInputError("filters", "ranges take a number or a string")
    if c.op is FilterOp.IN:
        if not isinstance(c.value, tuple):
            raise InvalidMemoryInputError("filters", "'in' takes a list of values")
        params += [c.key, _json(c.value), c.key]
        return sql.SQL(
            "(jsonb_typeof({v}) <> 'array' AND %s::jsonb @> jsonb_build_array({v2}))"
        ).format(v=value, v2=value)
    if c.op is FilterOp.ARRAY_CONTAINS:
        params += [c.key, c.key, _json(c.value)]
        return sql.SQL(
            "(jsonb_typeof({v}) = 'array' AND {v} @> jsonb_build_array(%s::jsonb))"
        ).format(v=value)
    raise InvalidMemoryInputError("filters", "unknown operator")


def _json(value: MetadataValue) -> str:
    return json.dumps(list(value) if isinstance(value, tuple) else value)


def metadata_json(metadata: Metadata) -> str:
    """Serialises validated metadata for a jsonb column (lists of strings become arrays)."""
    return json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in metadata.items()})


def metadata_from_json(raw: Mapping[str, Any]) -> Metadata:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
