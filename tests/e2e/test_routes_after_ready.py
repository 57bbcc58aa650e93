"""`factledger serve`'s app starts with its health routes only and loads the API's and the
console's routes once it is ready (`api.http.deferred_routes`): a ready `/readyz` is answered
before they load and starts their load; a request that comes before they are loaded waits and
is answered as it would be after, never with a 404."""

from __future__ import annotations

from support.api_harness import TEST_AUTH, asgi_client, bearer

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.http.deferred_routes import DeferredRoutes

PROFILE = "/v1/subjects/me/profile"


def deferred(app: object) -> DeferredRoutes:
    routes = app.state.routes  # type: ignore[attr-defined]
    assert isinstance(routes, DeferredRoutes)
    return routes


async def test_the_ready_answer_loads_the_routes_and_liveness_does_not(
    ports: Runtime,
) -> None:
    app = create_app(ports=ports, auth=TEST_AUTH, routes_after_ready=True)
    routes = deferred(app)
    async with asgi_client(app) as client:
        assert (await client.get("/healthz")).status_code == 200
        assert not routes.installed  # liveness neither needs nor loads them
        ready = await client.get("/readyz")
        # In process, a response returns once its background tasks ran: the ready answer's
        # task loaded the routes (a served answer is sent before it runs).
        assert ready.status_code == 200
        assert routes.installed
        assert (await client.get(PROFILE)).status_code == 401  # no bearer


async def test_a_request_before_the_routes_load_waits_and_is_answered(ports: Runtime) -> None:
    app = create_app(ports=ports, auth=TEST_AUTH, routes_after_ready=True)
    async with asgi_client(app) as client:
        profile = await client.get(PROFILE, headers=bearer("not-a-jwt"))
        console = await client.get("/console/queue")
        missing = await client.get("/no-such-path")
    assert profile.status_code == 401, profile.text  # the route's own answer, not a 404
    assert console.status_code == 303  # signed out: to the sign-in page
    assert missing.status_code == 404
    assert deferred(app).installed
