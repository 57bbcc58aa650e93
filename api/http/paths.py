"""Paths the app's middleware must know before the routes that serve them are loaded."""

from __future__ import annotations

IMPORT_PATH = "/v1/import"  # its body is streamed, each line bounded by the import itself
# Answered by the health routes, which a start serves at once; every other route waits for
# the route set (`api.http.deferred_routes`).
HEALTH_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
READY_PATH = "/readyz"
