"""Console errors as pages: the API's status table, rendered as HTML instead of JSON.

- No session on a GET: a redirect to sign-in; on a POST, the 401 page (a form is not replayed).
- Validation errors name the field and a fixed rule (`http.errors.validation_body`), never
  the input; other errors show their type and their message, which names ids only.
- A 5xx shows the type alone, logged as the API logs it (`http.errors.render`), and says
  which dependency is down (the database, the memory backend, the disk), with `Retry-After`.
- Anything unexpected is the 500 page (`ConsoleErrorPagesMiddleware`): the request id to quote
  to an operator, nothing of the request or of the error's message.
"""

from __future__ import annotations

import uuid

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factledger.api.console.guard import CsrfRefusedError, SignInRequiredError
from factledger.api.console.pages import render_page
from factledger.api.http.errors import (
    STATUS_BY_ERROR,
    ServerBusyError,
    render,
    status_for,
    validation_body,
)
from factledger.application.errors import (
    MemoryBackendError,
    StorageFullError,
    StorageReadOnlyError,
    StoreUnavailableError,
)

CONSOLE_STATUS: dict[type[Exception], int] = {SignInRequiredError: 401, CsrfRefusedError: 403}
TITLES = {
    401: "Sign-in required",
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    410: "Gone",
    422: "Check the form",
    429: "Too many requests",
}


# What a 5xx page says is down, by the nearest class of the error; never the error's message.
UNAVAILABLE: dict[type[Exception], tuple[str, str]] = {
    StorageFullError: ("Storage full", "the database's disk is full; an operator must free space"),
    StorageReadOnlyError: ("Storage read-only", "the database accepts reads only at the moment"),
    MemoryBackendError: ("Memory backend unavailable", "the memory backend is not answering"),
    StoreUnavailableError: (
        "Database unavailable",
        "the database cannot be reached; this page works again once it is back",
    ),
    ServerBusyError: ("Busy", "the server is running as many changes as it admits"),
}
FALLBACK_UNAVAILABLE = ("Unavailable", "a dependency is unavailable")


def _unavailable(exc: Exception) -> tuple[str, str]:
    for klass in type(exc).__mro__:
        if klass in UNAVAILABLE:
            return UNAVAILABLE[klass]
    return FALLBACK_UNAVAILABLE


def request_id() -> str:
    """The id the API's outermost middleware bound for this request (and echoes in
    `X-Request-ID`); a fresh one if the console runs without it."""
    bound = structlog.contextvars.get_contextvars().get("request_id")
    return bound if isinstance(bound, str) else uuid.uuid4().hex


def _back_link(request: Request) -> str:
    """Where to go from an error: the page a refused form was posted from, else the queue."""
    path = request.url.path
    if request.method == "POST" and path.count("/") > 2:
        return path.rsplit("/", 1)[0]
    return "/console/queue"


def _page(
    request: Request,
    status: int,
    error: str,
    detail: str,
    field: str | None,
    *,
    title: str | None = None,
) -> Response:
    return render_page(
        request,
        "error.html",
        None,
        status_code=status,
        title=title or TITLES.get(status, "Unavailable" if status >= 500 else "Error"),
        error=error,
        detail=detail,
        field=field,
        back=_back_link(request),
        request_id=request_id() if status >= 500 else None,
    )


def _unexpected_page(request: Request, exc: Exception) -> Response:
    render(exc)  # logs it once, as the API does: the error type and frames, no message
    detail = "the console could not show this page; quote the request id to an operator"
    return _page(request, 500, "InternalError", detail, None, title="Something went wrong")


async def _on_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, SignInRequiredError) and request.method == "GET":
        return RedirectResponse("/console/sign-in", status_code=303)
    status = CONSOLE_STATUS.get(type(exc)) or status_for(exc) or 500
    if status >= 500:
        rendered = render(exc)  # logs it as the API does, by error type only
        title, detail = _unavailable(exc)
        page = _page(request, rendered.status_code, type(exc).__name__, detail, None, title=title)
        if "retry-after" in rendered.headers:
            page.headers["Retry-After"] = rendered.headers["retry-after"]
        return page
    return _page(request, status, type(exc).__name__, str(exc), getattr(exc, "field", None))


async def _on_validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)  # noqa: S101 - registered for this type only
    body = validation_body(exc)
    return _page(request, 422, "ValidationError", body["detail"], body.get("field"))


async def _on_http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)  # noqa: S101 - registered for this type only
    return _page(request, exc.status_code, "HTTPError", str(exc.detail), None)


class ConsoleErrorPagesMiddleware:
    """Renders an exception no handler took as the console's 500 page instead of letting it
    reach the API's outermost middleware, whose 500 is JSON. A response already started is
    cut off as the API cuts it (the exception goes on)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def noting_start(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, noting_start)
        except Exception as exc:
            if started:
                raise
            page = _unexpected_page(Request(scope, receive), exc)
            await page(scope, receive, send)


def install_console_errors(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    for klass in (*CONSOLE_STATUS, *STATUS_BY_ERROR):
        app.add_exception_handler(klass, _on_error)
