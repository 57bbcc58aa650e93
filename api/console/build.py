"""The console's sub-application: its routes, error pages, static files and headers.

Importing this module builds the console's routes; `factledger serve` imports it once the
process is ready (`api.http.deferred_routes`), other callers when they build the app.
"""

from __future__ import annotations

import secrets

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factledger.api.console.errors import ConsoleErrorPagesMiddleware, install_console_errors
from factledger.api.console.guard import ConsoleState
from factledger.api.console.pages import STATIC_DIR
from factledger.api.console.paths import MOUNT
from factledger.api.console.routes.operations import router as operations_router
from factledger.api.console.routes.queue import router as queue_router
from factledger.api.console.routes.sign_in import router as sign_in_router
from factledger.api.console.routes.subjects import router as subjects_router
from factledger.api.console.session import CookieSigner
from factledger.api.http.deps import WRITE_SLOT, ApiState
from factledger.api.settings import ConsoleSettings

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; "
        b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
# The app's own scripts and styles hold nothing of anyone's: a browser keeps them, so a page
# is one request, not three. Their addresses carry their content's hash (`static_url`), so a
# new release is fetched at once.
STATIC_HEADERS = [
    *(h for h in HEADERS if h[0] != b"cache-control"),
    (b"cache-control", b"public, max-age=31536000, immutable"),
]


class ConsoleHeadersMiddleware:
    """Adds `HEADERS` to every console response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        static = path.startswith(f"{MOUNT}/static/") or path.startswith("/static/")
        added = STATIC_HEADERS if static else HEADERS

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        await self.app(scope, receive, with_headers)


def build_console(api: ApiState, settings: ConsoleSettings, *, secure_cookies: bool) -> FastAPI:
    secret = settings.session_secret
    key = secrets.token_bytes(32) if secret is None else secret.get_secret_value().encode()
    console = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    console.state.api = api  # the API's dependencies (ledger, profiles, sync store) read it
    previous = [old.get_secret_value().encode() for old in settings.previous_session_secrets]
    signer = CookieSigner(key, previous=previous)
    console.state.console = ConsoleState(api, signer, settings, secure_cookies)
    install_console_errors(console)
    console.include_router(sign_in_router)
    for router in (queue_router, subjects_router, operations_router):
        console.include_router(router, dependencies=[WRITE_SLOT])
    console.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    # Inside the headers: an error page gets the same headers as any other page.
    console.add_middleware(ConsoleErrorPagesMiddleware)
    console.add_middleware(ConsoleHeadersMiddleware)
    return console
