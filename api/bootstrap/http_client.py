"""`ClientOnDemand`: the runtime's outbound HTTP client, opened when an adapter first needs it.

Only the adapters that call out over HTTP (the LLM extractor, the HTTP embedder) use one; the
self-hosted defaults never do. Opening an `httpx.AsyncClient` builds its TLS context, which
reads the whole CA bundle: about 45 ms of CPU each, twice per start, for a client most
deployments never send a request through.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack

import httpx

# A client at hand (tests, the lab), or a way to get one on first use.
HttpClient = httpx.AsyncClient | Callable[[], httpx.AsyncClient]


class ClientOnDemand:
    """One `httpx.AsyncClient`, opened at the first call and closed when `stack` closes."""

    def __init__(self, stack: AsyncExitStack) -> None:
        self._stack = stack
        self._client: httpx.AsyncClient | None = None

    def __call__(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient()
            self._stack.push_async_callback(self._client.aclose)
        return self._client


def client_of(http: HttpClient) -> httpx.AsyncClient:
    """The client itself, opening it if it is opened on demand."""
    return http if isinstance(http, httpx.AsyncClient) else http()
