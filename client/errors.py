"""Errors the client raises: one per kind of API answer, each carrying the API's error shape."""

from __future__ import annotations


class FactledgerError(Exception):
    """An error answer from the API: `status`, the server's `error` type, `detail`, `field`."""

    def __init__(self, status: int, error: str, detail: str, field: str | None = None) -> None:
        super().__init__(f"{status} {error}: {detail}")
        self.status = status
        self.error = error
        self.detail = detail
        self.field = field


class AuthenticationFailedError(FactledgerError):
    """401: the token is missing, expired, forged or from an unknown key."""


class PermissionDeniedError(FactledgerError):
    """403: the token's role or subject does not allow this."""


class NotFoundError(FactledgerError):
    """404: no such subject, session, change or item in your tenant."""


class ConflictError(FactledgerError):
    """409: a concurrent change, a broken business rule, or the same key still in progress."""


class PayloadTooLargeError(FactledgerError):
    """413: the body exceeds the server's limit."""


class InvalidRequestError(FactledgerError):
    """422: invalid input; `field` names it."""


class ServerUnavailableError(FactledgerError):
    """5xx: the server or one of its dependencies is unavailable (retried automatically)."""


class TransportFailedError(FactledgerError):
    """The server could not be reached (after the retries)."""

    def __init__(self, detail: str) -> None:
        super().__init__(0, "TransportError", detail)


_BY_STATUS: dict[int, type[FactledgerError]] = {
    401: AuthenticationFailedError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: InvalidRequestError,
}


def error_for(status: int, body: object) -> FactledgerError:
    """The exception for an error answer; tolerates bodies that are not the API's shape."""
    error, detail, field = "HTTPError", f"status {status}", None
    if isinstance(body, dict):
        error = str(body.get("error", error))
        detail = str(body.get("detail", detail))
        raw_field = body.get("field")
        field = None if raw_field is None else str(raw_field)
    klass = _BY_STATUS.get(status, ServerUnavailableError if status >= 500 else FactledgerError)
    return klass(status, error, detail, field)
