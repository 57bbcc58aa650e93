"""The console as a sub-application of the API, mounted at `/console`.

It shares the API's state (token verifier, rate limits, the runtime its lifespan opens), so
its pages call the same use cases, and it has its own error handlers (pages, not JSON) and
response headers: no caching of pages that show personal content, no framing, and a content
security policy that admits the app's own static files only.

`create_app` is the API's factory plus the console; `factledger serve` runs it.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.paths import MOUNT as MOUNT
from factledger.api.http.app import create_app as create_api
from factledger.api.http.deferred_routes import DeferredRoutes
from factledger.api.http.deps import ApiState
from factledger.api.settings import AuthSettings, ConsoleSettings, RateLimitSettings, Settings


def create_app(
    settings: Settings | None = None,
    *,
    ports: Runtime | None = None,
    auth: AuthSettings | None = None,
    max_body_bytes: int | None = None,
    rate_limit: RateLimitSettings | None = None,
    console: ConsoleSettings | None = None,
    routes_after_ready: bool = False,
) -> FastAPI:
    """The API (`api.http.app.create_app`) with the console at `/console` unless it is
    disabled; cookies are `Secure` outside the `dev` environment. With `routes_after_ready`
    the console is mounted with the API's routes, once the process is ready."""
    if settings is None:
        settings = Settings() if ports is None else Settings(auth=auth or AuthSettings())
    app = create_api(
        settings,
        ports=ports,
        auth=auth,
        max_body_bytes=max_body_bytes,
        rate_limit=rate_limit,
        routes_after_ready=routes_after_ready,
    )
    chosen = console or settings.console
    if chosen.enabled:
        secure = (auth or settings.auth).environment != "dev"
        routes: DeferredRoutes | None = getattr(app.state, "routes", None)
        if routes is None:
            _console_mount(app, app.state.api, chosen, secure_cookies=secure)()
        else:
            routes.add(
                "the console",
                lambda: _console_mount(app, app.state.api, chosen, secure_cookies=secure),
            )
    return app


def _console_mount(
    app: FastAPI, api: ApiState, settings: ConsoleSettings, *, secure_cookies: bool
) -> Callable[[], None]:
    """Imports and builds the console (the slow part, on the loader's thread when deferred);
    returns its mounting on `app`."""
    from factledger.api.console.build import build_console

    console = build_console(api, settings, secure_cookies=secure_cookies)
    return lambda: app.mount(MOUNT, console)
