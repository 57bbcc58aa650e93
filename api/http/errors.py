"""One error table and one error shape for the whole HTTP API.

Every error leaves the API as `{"error": "<Type>", "detail": "...", "field": "..."}`:
- `STATUS_BY_ERROR` maps exception types (walked along the MRO, so subclasses inherit their
  parent's status) to HTTP statuses; routes never catch exceptions themselves.
- Validation errors name the field and the rule, never the input value (pydantic echoes values).
- Anything not in the table is a generic 500, logged once with its traceback and no message text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from factledger.api.http.schemas.common import BODY_RULE_ERROR
from factledger.application.errors import (
    ConcurrencyError,
    InvalidMemoryInputError,
    MemoryBackendError,
    MemoryConflictError,
    NotFoundError,
    StorageFullError,
    StorageReadOnlyError,
    StoreUnavailableError,
)
from factledger.application.importing.importer import ImportMismatchError
from factledger.application.ledger.subject_ids import SubjectIdKeyLostError
from factledger.application.memory.guidance_catalogue import UnknownConversationTypeError
from factledger.application.sessions.field_screening import UnsafeFieldError
from factledger.application.sessions.times import ConversationTimeError
from factledger.domain import errors as de
from factledger.domain.text import UNSAFE_TEXT_RULE

log = structlog.get_logger(__name__)


class ApiError(Exception):
    """Base class of the errors the HTTP layer raises itself. Messages carry no content."""

    field: str | None = None


class AuthenticationError(ApiError):
    """No token, or a token that is malformed, forged, expired or from an unknown key."""


class PermissionDeniedError(ApiError):
    """The principal is authenticated but its role or subject does not allow this."""


class SubjectNotFoundError(ApiError):
    """No such subject in the principal's tenant (other tenants are never consulted)."""


class IdempotencyKeyReusedError(ApiError):
    """An idempotency key was reused for a different request."""

    field = "Idempotency-Key"


class RequestInProgressError(ApiError):
    """A request with the same idempotency key is still being processed."""

    field = "Idempotency-Key"


class SelectionChangedError(ApiError):
    """A decision on every change a filter matches found more than the reviewer confirmed."""

    field = "expected_count"


class PayloadTooLargeError(ApiError):
    """The request body exceeds the configured limit."""


class InvalidParameterError(ApiError):
    """A parameter is well-formed JSON but breaks a rule; names the field and the rule."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field


class RateLimitedError(ApiError):
    """Too many requests from one principal, tenant or (failed authentications) address."""

    def __init__(self, limit: str, retry_after_s: int) -> None:
        super().__init__(f"rate limit exceeded ({limit}); retry after {retry_after_s} s")
        self.retry_after_s = retry_after_s


class ServiceUnavailableError(ApiError):
    """A dependency the request needs is not configured or not reachable."""


class RoutesNotLoadedError(ServiceUnavailableError):
    """A served process could not load the routes it defers to after ready (ADR 0095); the
    message (ours: the part and the error's type, no path or host) says which."""


class ServerBusyError(ApiError):
    """This API process is running as many writes as it admits; retry after `Retry-After`."""


class BodyTimeoutError(StarletteHTTPException):
    """The request body did not arrive within its time allowance: a sender that trickles or
    stalls must not hold what the request took (a write slot, a thread) for as long as it likes.
    An HTTP exception, so that FastAPI's own body reading passes it on instead of a 400."""

    def __init__(self, detail: str) -> None:
        super().__init__(408, detail, headers={"Connection": "close"})


# The status logged and counted for a request whose client went away before its answer (the
# convention of common proxies; nobody receives it).
CLIENT_CLOSED_REQUEST = 499

STATUS_BY_ERROR: dict[type[Exception], int] = {
    AuthenticationError: 401,
    PermissionDeniedError: 403,
    SubjectNotFoundError: 404,
    NotFoundError: 404,
    IdempotencyKeyReusedError: 422,
    InvalidParameterError: 422,
    InvalidMemoryInputError: 422,
    UnsafeFieldError: 422,
    ConversationTimeError: 422,
    UnknownConversationTypeError: 422,
    RequestInProgressError: 409,
    SelectionChangedError: 409,
    ConcurrencyError: 409,
    ImportMismatchError: 409,
    MemoryConflictError: 409,
    PayloadTooLargeError: 413,
    RateLimitedError: 429,
    MemoryBackendError: 503,
    StoreUnavailableError: 503,
    ServiceUnavailableError: 503,
    ServerBusyError: 503,
    # The ledger's rules: a conflict with the subject's state by default (409), bad input 422.
    de.DomainError: 409,
    de.ChangeNotFoundError: 404,
    de.FieldNotHeldError: 404,  # the path names the field (an expiry)
    de.SubjectErasedError: 410,  # for its own tenant only: others get the 404 of no subject
    de.ConfirmationNotAllowedError: 403,
    de.InvalidValueError: 422,
    de.InvalidFieldNameError: 422,
    de.UnknownFieldError: 422,
    de.ValueTypeMismatchError: 422,
    de.InvalidOperationError: 422,
    de.InvalidReferenceError: 422,
    de.InvalidSessionError: 422,
    de.EvidenceNotFoundError: 422,
    de.StatedWithoutEvidenceError: 422,
    de.ConfirmationWithoutEvidenceError: 422,
    de.ConfirmationNotFromSubjectError: 422,
    de.ConfirmationReusesEvidenceError: 422,
    de.ConfirmationBeforeProposalError: 422,
    de.HedgeDroppedError: 422,
}
# A store that is down is usually back within seconds (a failover, a restart); the hint keeps
# well-behaved clients from retrying in a tight loop meanwhile.
STORE_RETRY_AFTER_S = 5
# A full or read-only disk needs an operator: no point in retrying within seconds.
STORAGE_RETRY_AFTER_S = 60
IN_PROGRESS_RETRY_AFTER_S = 1
BUSY_RETRY_AFTER_S = 1


def status_for(exc: BaseException) -> int | None:
    """The status of the nearest class of `exc` in the table, or None when it is unexpected."""
    for klass in type(exc).__mro__:
        status = STATUS_BY_ERROR.get(klass)
        if status is not None:
            return status
    return None


def error_body(error: str, detail: str, field: str | None = None) -> dict[str, str]:
    body = {"error": error, "detail": detail}
    if field is not None:
        body["field"] = field
    return body


# A location names schema fields, but also the caller's own keys (an extra field, a map
# key): only names that look like identifiers are repeated, anything else becomes `*`.
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


def _field_of(loc: Sequence[Any]) -> str:
    # ("body", "messages", 0, "text") -> "messages[0].text"; the first item names the source.
    parts: list[str] = []
    for item in loc[1:] if len(loc) > 1 else loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            name = str(item) if _NAME.fullmatch(str(item)) else "*"
            parts.append(("." if parts else "") + name)
    return "".join(parts) or "body"


# One fixed rule per pydantic error type. pydantic's own `msg`, `input` and `ctx` can quote the
# caller's input (an unknown union tag comes back verbatim), so none of them reaches the body;
# only limits the schema itself declares (lengths, bounds) are filled in, from `ctx`.
_RULES: dict[str, str] = {
    "missing": "is required",
    "extra_forbidden": "is not allowed",
    "string_type": "should be a string",
    "string_too_short": "should have at least {min_length} characters",
    "string_too_long": "should have at most {max_length} characters",
    "string_pattern_mismatch": "does not have the expected format",
    "string_unicode": "should be valid Unicode",
    "unsafe_text": UNSAFE_TEXT_RULE,  # raised by `schemas.common.SafeText`
    "too_short": "should have at least {min_length} items",
    "too_long": "should have at most {max_length} items",
    "int_type": "should be an integer",
    "int_parsing": "should be an integer",
    "int_from_float": "should be an integer",
    "float_type": "should be a number",
    "float_parsing": "should be a number",
    "finite_number": "should be a finite number",
    "bool_type": "should be a boolean",
    "bool_parsing": "should be a boolean",
    "greater_than": "should be greater than {gt}",
    "greater_than_equal": "should be at least {ge}",
    "less_than": "should be less than {lt}",
    "less_than_equal": "should be at most {le}",
    "enum": "is not one of the allowed values",
    "literal_error": "is not one of the allowed values",
    "union_tag_invalid": "has an unknown type tag",
    "union_tag_not_found": "needs a type tag",
    "uuid_type": "should be a UUID",
    "uuid_parsing": "should be a UUID",
    "date_type": "should be a date (YYYY-MM-DD)",
    "date_parsing": "should be a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "should be a date (YYYY-MM-DD)",
    "datetime_type": "should be an ISO 8601 date-time",
    "datetime_parsing": "should be an ISO 8601 date-time",
    "datetime_from_date_parsing": "should be an ISO 8601 date-time",
    "timezone_aware": "should carry a time zone",
    "dict_type": "should be an object",
    "model_type": "should be an object",
    "model_attributes_type": "should be an object",
    "list_type": "should be a list",
    "json_invalid": "the body is not valid JSON",
    "json_type": "should be JSON",
}
_GENERIC_RULE = "is invalid"
_LIMITS = ("min_length", "max_length", "gt", "ge", "lt", "le")


def _rule_of(error: Mapping[str, Any]) -> str:
    template = _RULES.get(str(error.get("type", "")), _GENERIC_RULE)
    ctx = error.get("ctx") or {}
    limits = {k: ctx[k] for k in _LIMITS if isinstance(ctx.get(k), int | float)}
    try:
        return template.format(**limits)
    except (KeyError, IndexError):
        return _GENERIC_RULE


def validation_body(exc: RequestValidationError) -> dict[str, str]:
    """Names the first failing field and a fixed rule for its error type; nothing pydantic
    derives from the input (`msg`, `input`, `ctx` beyond declared limits) is echoed."""
    errors = exc.errors()
    if not errors:
        return error_body("ValidationError", "the request is invalid", "body")
    first = errors[0]
    if first.get("type") == "json_invalid":
        return error_body("ValidationError", f"body: {_RULES['json_invalid']}", "body")
    ctx = first.get("ctx") or {}
    if first.get("type") == BODY_RULE_ERROR and isinstance(ctx.get("field"), str):
        # A rule across fields: blamed on the field its model names, said as the model says it.
        field = ".".join(p for p in (_field_of(first.get("loc", ())), ctx["field"]) if p != "body")
        return error_body("ValidationError", f"{field}: {first.get('msg')}", field)
    field = _field_of(first.get("loc", ()))
    return error_body("ValidationError", f"{field}: {_rule_of(first)}", field)


async def _on_validation(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)  # noqa: S101 - registered for this type only
    return JSONResponse(validation_body(exc), status_code=422)


async def _on_http(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)  # noqa: S101 - registered for this type only
    return _http_response(exc)


def _http_response(exc: StarletteHTTPException) -> JSONResponse:
    names = {
        400: "BadRequest",
        404: "NotFound",
        405: "MethodNotAllowed",
        408: "RequestTimeout",
        413: "PayloadTooLarge",
    }
    error = names.get(exc.status_code, "HTTPError")
    headers = getattr(exc, "headers", None)
    return JSONResponse(
        error_body(error, str(exc.detail)), status_code=exc.status_code, headers=headers
    )


def _headers_for(exc: Exception, status: int) -> dict[str, str] | None:
    if status == 401:
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, StorageFullError | StorageReadOnlyError):
        return {"Retry-After": str(STORAGE_RETRY_AFTER_S)}
    if isinstance(exc, StoreUnavailableError):
        return {"Retry-After": str(STORE_RETRY_AFTER_S)}
    if isinstance(exc, ServerBusyError | RoutesNotLoadedError):
        return {"Retry-After": str(BUSY_RETRY_AFTER_S)}
    if isinstance(exc, RequestInProgressError):
        # The first try renews its claim while it runs, or the claim lapses within a lease.
        return {"Retry-After": str(IN_PROGRESS_RETRY_AFTER_S)}
    if isinstance(exc, RateLimitedError):
        return {"Retry-After": str(exc.retry_after_s)}
    return None


def render(exc: Exception) -> JSONResponse:
    """The response for a known error; a 500 for anything else (logged once, no message)."""
    if isinstance(exc, ClientDisconnect):
        # The caller left mid-request (an upload cut short): its doing, not a fault of ours.
        log.info("http.client_disconnected")
        return JSONResponse(
            error_body("ClientDisconnected", "the client went away"),
            status_code=CLIENT_CLOSED_REQUEST,
        )
    if isinstance(exc, StarletteHTTPException):
        return _http_response(exc)
    status = status_for(exc)
    if status is None:
        log.error("api.unexpected_error", error_type=type(exc).__name__, exc_info=exc)
        return JSONResponse(error_body("InternalError", "unexpected error"), status_code=500)
    headers = _headers_for(exc, status)
    field = getattr(exc, "field", None)
    body = error_body(type(exc).__name__, str(exc) or type(exc).__name__, field)
    if status >= 500:
        # Adapter messages may name hosts; the type is enough for the caller.
        cause = exc.__cause__
        log.warning(
            "api.dependency_failed",
            error_type=type(exc).__name__,
            # The driver's error class (never its message): a refused connection, a pool
            # timeout and a full disk call for different actions.
            cause_type=None if cause is None else type(cause).__name__,
            status=status,
        )
        # A lost key of subject ids needs the operator, not a retry: its message (ours, no
        # host in it) says what to restore.
        detail = str(exc) if isinstance(exc, SubjectIdKeyLostError | RoutesNotLoadedError) else None
        body = error_body(type(exc).__name__, detail or "a dependency is unavailable")
    return JSONResponse(body, status_code=status, headers=headers)


async def _on_error(_: Request, exc: Exception) -> JSONResponse:
    return render(exc)


def install_error_handlers(app: FastAPI) -> None:
    """Handlers for every class in the table; unexpected errors are caught by the outermost
    middleware (`middleware.RequestContextMiddleware`), which renders the generic 500."""
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    for klass in STATUS_BY_ERROR:
        app.add_exception_handler(klass, _on_error)
    app.add_exception_handler(ClientDisconnect, _on_error)
