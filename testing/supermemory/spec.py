"""Request validation for the local Supermemory server, driven by the vendor's v5 OpenAPI spec.

The spec file beside this module is the one SDK 5.0.1 was generated from. Every request body,
path parameter and query parameter the server accepts is checked against the operation's own
schema (with `#/components/...` references resolved), so an unknown field or a wrong type gets
the 400 the real API documents, in its validation-error shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

from factledger.adapters.extras import Extra, MissingExtraError

if TYPE_CHECKING:
    import jsonschema

SPEC_FILE = "openapi_v5.json"
JsonObject = dict[str, Any]


class SpecValidationError(Exception):
    """A request broke the spec; `issues` is the body of the 400 response."""

    def __init__(self, issues: list[JsonObject]) -> None:
        super().__init__(f"{len(issues)} validation issue(s)")
        self.issues = issues

    def response_body(self) -> JsonObject:
        return {"success": False, "error": self.issues}


@cache
def load_spec() -> JsonObject:
    """The v5 OpenAPI document, read once from package data."""
    text = (
        resources.files("factledger.testing.supermemory")
        .joinpath(SPEC_FILE)
        .read_text(encoding="utf-8")
    )
    spec: JsonObject = json.loads(text)
    return spec


@cache
def _root_validator() -> jsonschema.protocols.Validator:
    # jsonschema comes from the `testing` extra, imported when the first request is checked.
    try:
        from jsonschema import Draft202012Validator
    except ImportError as exc:
        raise MissingExtraError("the local Supermemory server", Extra.TESTING) from exc
    # Rooted at the whole document so "#/components/schemas/..." references resolve.
    return Draft202012Validator(load_spec())


@dataclass(frozen=True, slots=True)
class Operation:
    """One (method, path template) of the spec with its parameter and body schemas."""

    method: str
    path: str
    parameters: tuple[JsonObject, ...]
    body_schema: JsonObject | None
    body_required: bool

    def validate(
        self,
        path_params: dict[str, str],
        query: list[tuple[str, str]],
        body: object | None,
    ) -> dict[str, Any]:
        """Checks a request; returns the decoded query parameters or raises SpecValidationError."""
        issues: list[JsonObject] = []
        decoded: dict[str, Any] = {}
        known = {p["name"] for p in self.parameters if p["in"] == "query"}
        issues.extend(
            {"message": f"Unrecognized query parameter '{name}'", "path": ["query", name]}
            for name, _ in query
            if name not in known
        )
        for param in self.parameters:
            value = _parameter_value(param, path_params, query)
            name = param["name"]
            if value is None:
                if param.get("required"):
                    issues.append({"message": "Required", "path": [param["in"], name]})
                continue
            issues.extend(_schema_issues(param["schema"], value, [param["in"], name]))
            decoded[name] = value
        if self.body_schema is not None:
            if body is None:
                if self.body_required:
                    issues.append({"message": "Required", "path": ["body"]})
            else:
                issues.extend(_schema_issues(self.body_schema, body, []))
        elif body is not None:
            issues.append({"message": "This operation takes no body", "path": ["body"]})
        if issues:
            raise SpecValidationError(issues)
        return decoded


def _parameter_value(
    param: JsonObject, path_params: dict[str, str], query: list[tuple[str, str]]
) -> Any:
    name, schema = param["name"], param["schema"]
    if param["in"] == "path":
        return path_params.get(name)
    raw = [value for key, value in query if key == name]
    if not raw:
        return None
    if schema.get("type") == "array":
        # The spec says form/explode=false (`a,b`) but SDK 5.0.1 repeats the key (`x=a&x=b`):
        # accept both, as the reference notes recommend.
        return [item for value in raw for item in value.split(",") if item]
    if schema.get("type") in ("integer", "number"):
        try:
            return int(raw[-1]) if schema["type"] == "integer" else float(raw[-1])
        except ValueError:
            return raw[-1]  # the schema check below reports the wrong type
    return raw[-1]


_VALIDATORS: dict[int, jsonschema.protocols.Validator] = {}


def _schema_issues(schema: JsonObject, value: object, prefix: list[str]) -> list[JsonObject]:
    # Schemas are parts of the cached spec document, so their identity is a stable key.
    validator = _VALIDATORS.get(id(schema))
    if validator is None:
        validator = _VALIDATORS[id(schema)] = _root_validator().evolve(schema=schema)
    return [
        {"message": error.message, "path": [*prefix, *error.absolute_path]}
        for error in validator.iter_errors(cast("Any", value))
    ]


@cache
def operation(method: str, path: str) -> Operation:
    """The spec's operation for a method and path template ("post", "/ns/{namespace}/search")."""
    entry = load_spec()["paths"][path][method]
    content = entry.get("requestBody", {}).get("content", {})
    json_body = content.get("application/json")
    return Operation(
        method=method,
        path=path,
        parameters=tuple(entry.get("parameters", ())),
        body_schema=json_body["schema"] if json_body else None,
        body_required=bool(entry.get("requestBody", {}).get("required", False)),
    )


def response_issues(method: str, path: str, status: int, body: object) -> list[JsonObject]:
    """What is wrong with a response body by the spec (empty when it conforms); for tests."""
    entry = load_spec()["paths"][path][method]
    schema = entry["responses"][str(status)]["content"]["application/json"]["schema"]
    return _schema_issues(schema, body, [])
