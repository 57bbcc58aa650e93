"""Where the console is mounted in the API app."""

from __future__ import annotations

MOUNT = "/console"
