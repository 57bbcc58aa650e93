"""Console errors as pages: the API's status table, rendered as HTML instead of JSON.

- No session on a GET: a redirect to sign-in; on a POST, the 401 page (a form is not replayed).
- Validation errors name the field and a fixed rule (`http.errors.validation_body`), never
  the input; other errors show their type and their message, which names ids only.
- A 5xx shows the type alone, logged as the API logs it (`http.errors.render`).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from factledger.api.console.guard import CsrfRefusedError, SignInRequiredError
from factledger.api.console.pages import render_page
from factledger.api.http.errors import STATUS_BY_ERROR, render, status_for, validation_body

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


def _back_link(request: Request) -> str:
    """Where to go from an error: the page a refused form was posted from, else the queue."""
    path = request.url.path
    if request.method == "POST" and path.count("/") > 2:
        return path.rsplit("/", 1)[0]
    return "/console/queue"


def _page(request: Request, status: int, error: str, detail: str, field: str | None) -> Response:
    return render_page(
        request,
        "error.html",
        None,
        status_code=status,
        title=TITLES.get(status, "Unavailable" if status >= 500 else "Error"),
        error=error,
        detail=detail,
        field=field,
        back=_back_link(request),
    )


async def _on_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, SignInRequiredError) and request.method == "GET":
        return RedirectResponse("/console/sign-in", status_code=303)
    status = CONSOLE_STATUS.get(type(exc)) or status_for(exc) or 500
    if status >= 500:
        rendered = render(exc)  # logs it as the API does, by error type only
        return _page(request, rendered.status_code, type(exc).__name__, "try again later", None)
    return _page(request, status, type(exc).__name__, str(exc), getattr(exc, "field", None))


async def _on_validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)  # noqa: S101 - registered for this type only
    body = validation_body(exc)
    return _page(request, 422, "ValidationError", body["detail"], body.get("field"))


async def _on_http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)  # noqa: S101 - registered for this type only
    return _page(request, exc.status_code, "HTTPError", str(exc.detail), None)


def install_console_errors(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    for klass in (*CONSOLE_STATUS, *STATUS_BY_ERROR):
        app.add_exception_handler(klass, _on_error)
