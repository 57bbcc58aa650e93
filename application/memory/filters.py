"""Evaluates metadata filters (eq, ranges, in, array contains, and/or) in Python."""

from __future__ import annotations

from collections.abc import Mapping

from factledger.application.memory.types import (
    AllOf,
    AnyOf,
    Condition,
    Filter,
    FilterOp,
    MetadataValue,
)


def matches(node: Filter | None, metadata: Mapping[str, MetadataValue]) -> bool:
    """True when the metadata satisfies the filter; a missing key never matches a condition."""
    match node:
        case None:
            return True
        case AllOf(operands=operands):
            return all(matches(operand, metadata) for operand in operands)
        case AnyOf(operands=operands):
            return any(matches(operand, metadata) for operand in operands)
        case Condition(key=key, op=op, value=value):
            if key not in metadata:
                return False
            return _compare(op, metadata[key], value)
    return False


def _compare(op: FilterOp, actual: MetadataValue, wanted: MetadataValue) -> bool:
    if op is FilterOp.EQ:
        return _same_kind(actual, wanted) and actual == wanted
    if op is FilterOp.NEQ:
        return not (_same_kind(actual, wanted) and actual == wanted)
    if op is FilterOp.IN:
        return isinstance(wanted, tuple) and not isinstance(actual, tuple) and actual in wanted
    if op is FilterOp.ARRAY_CONTAINS:
        return isinstance(actual, tuple) and wanted in actual
    return _in_range(op, actual, wanted)


def _same_kind(a: MetadataValue, b: MetadataValue) -> bool:
    # bool is an int in Python; a filter for `True` must not match the number 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    if isinstance(a, int | float) and isinstance(b, int | float):
        return True
    return type(a) is type(b)


def _in_range(op: FilterOp, actual: MetadataValue, wanted: MetadataValue) -> bool:
    numbers = (
        isinstance(actual, int | float)
        and isinstance(wanted, int | float)
        and not isinstance(actual, bool)
        and not isinstance(wanted, bool)
    )
    strings = isinstance(actual, str) and isinstance(wanted, str)
    if not (numbers or strings):
        return False
    # Strings compare lexically, which orders ISO-8601 dates correctly.
    a, w = actual, wanted
    if op is FilterOp.GT:
        return a > w  # type: ignore[operator]
    if op is FilterOp.GTE:
        return a >= w  # type: ignore[operator]
    if op is FilterOp.LT:
        return a < w  # type: ignore[operator]
    return a <= w  # type: ignore[operator]
