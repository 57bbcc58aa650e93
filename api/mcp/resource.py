"""`/mcp` as an OAuth protected resource (RFC 9728), so that hosts that only sign in with OAuth
find where to: the metadata at `/.well-known/oauth-protected-resource/mcp` (the MCP
authorization spec's path-suffixed form) and at `/.well-known/oauth-protected-resource` (the
API as a whole, whose identifier covers `/mcp`), and a 401 from `/mcp` whose
`WWW-Authenticate` names the metadata.

The metadata names the configured authorization servers (`AuthSettings.sign_in_servers`);
whatever they issue is still checked as every token is: issuer, audience, keys, tenant.
The resource's URL is `ApiSettings.public_url` when set, else the request's own (uvicorn
reads the proxy's forwarded scheme and host), so the metadata is right behind a proxy.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from factledger.api.settings import ApiSettings, AuthSettings

METADATA_PATH = "/.well-known/oauth-protected-resource"
# The metadata changes only with the settings: hosts may keep it for a while.
METADATA_MAX_AGE_S = 3600


@dataclass(frozen=True, slots=True)
class ProtectedResource:
    """What the metadata says, from the settings."""

    public_url: str | None
    authorization_servers: tuple[str, ...]

    @classmethod
    def of(cls, api: ApiSettings, auth: AuthSettings) -> ProtectedResource:
        return cls(api.public_url, auth.sign_in_servers())

    def base_url(self, request: Request) -> str:
        return (self.public_url or str(request.base_url)).rstrip("/")

    def metadata(self, request: Request, path: str) -> dict[str, object]:
        body: dict[str, object] = {
            "resource": self.base_url(request) + path,
            "bearer_methods_supported": ["header"],
            "resource_name": "factledger",
        }
        if self.authorization_servers:
            body["authorization_servers"] = list(self.authorization_servers)
        return body

    def challenge(self, request: Request, path: str, *, token_given: bool) -> str:
        """The `WWW-Authenticate` value of a 401 from `path` (RFC 6750, RFC 9728 section 5.1)."""
        where = f'resource_metadata="{self.base_url(request)}{METADATA_PATH}{path}"'
        return f'Bearer error="invalid_token", {where}' if token_given else f"Bearer {where}"

    def routes(self, *paths: str) -> list[Route]:
        """The metadata of the API as a whole and of each of `paths` (e.g. `/mcp`)."""

        def serve(path: str) -> Route:
            async def endpoint(request: Request) -> Response:
                return JSONResponse(
                    self.metadata(request, path),
                    headers={"Cache-Control": f"public, max-age={METADATA_MAX_AGE_S}"},
                )

            return Route(METADATA_PATH + path, endpoint, methods=["GET"], include_in_schema=False)

        return [serve(""), *(serve(path) for path in paths)]
