"""The v5 filter grammar (`FilterExpression`), evaluated against one metadata object.

The spec's JSON schema has already checked the shape; this module adds the one rule the schema
cannot express (nesting at most five levels) and the semantics:

- A missing key fails every positive predicate (`eq`, `gt`, `contains`, `arrayContains`, ...)
  and satisfies its negation (`neq`, `notContains`, `arrayNotContains`).
- `caseSensitive` defaults to true; booleans are never numbers.
"""

from __future__ import annotations

from typing import Any

JsonObject = dict[str, Any]
MAX_DEPTH = 5


class FilterDepthError(ValueError):
    """The expression nests deeper than the API allows."""


def check_depth(expression: JsonObject, depth: int = 1) -> None:
    if expression.get("operator") in ("and", "or"):
        if depth > MAX_DEPTH:
            raise FilterDepthError(f"filter nests deeper than {MAX_DEPTH} levels")
        for operand in expression["operands"]:
            check_depth(operand, depth + 1)


def matches(expression: JsonObject | None, metadata: JsonObject) -> bool:
    if expression is None:
        return True
    operator = expression["operator"]
    if operator == "and":
        return all(matches(operand, metadata) for operand in expression["operands"])
    if operator == "or":
        return any(matches(operand, metadata) for operand in expression["operands"])
    return _predicate(expression, metadata)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fold(value: str, case_sensitive: bool) -> str:
    return value if case_sensitive else value.casefold()


def _equals(actual: object, expected: object, case_sensitive: bool) -> bool:
    if isinstance(expected, str):
        return isinstance(actual, str) and _fold(actual, case_sensitive) == _fold(
            expected, case_sensitive
        )
    if isinstance(expected, bool):
        return isinstance(actual, bool) and actual == expected
    return _is_number(actual) and actual == expected


def _predicate(predicate: JsonObject, metadata: JsonObject) -> bool:
    operator: str = predicate["operator"]
    negated = operator in ("neq", "notContains", "arrayNotContains")
    if predicate["field"] not in metadata:
        return negated
    actual = metadata[predicate["field"]]
    expected = predicate["value"]
    case_sensitive = bool(predicate.get("caseSensitive", True))
    result: bool
    if operator in ("eq", "neq"):
        result = _equals(actual, expected, case_sensitive)
    elif operator in ("gt", "gte", "lt", "lte"):
        if not _is_number(actual):
            return False
        result = {
            "gt": actual > expected,
            "gte": actual >= expected,
            "lt": actual < expected,
            "lte": actual <= expected,
        }[operator]
        return result
    elif operator in ("contains", "notContains"):
        result = isinstance(actual, str) and _fold(expected, case_sensitive) in _fold(
            actual, case_sensitive
        )
    else:
        result = isinstance(actual, list) and expected in actual
    return not result if negated else result
