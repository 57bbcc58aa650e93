"""How workloads report progress without knowing about rich: a callable advanced per step."""

from __future__ import annotations

from collections.abc import Callable

Advance = Callable[[int], None]


def no_progress(_: int) -> None:
    """An `Advance` that shows nothing (tests, quiet runs)."""
