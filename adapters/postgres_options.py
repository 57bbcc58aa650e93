"""Sizes and timeouts of a PostgreSQL pool, apart from the pools (`postgres_pool`), so that
the composition root can describe a pool without importing the driver: an embedded start,
which opens no PostgreSQL store, never imports psycopg."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# libpq rounds a connect timeout below 2 s up to 2 s.
MIN_CONNECT_TIMEOUT_S = 2


@dataclass(frozen=True, slots=True)
class PoolOptions:
    """Sizes and timeouts of one pool (`api.settings.PostgresSettings` fills them in)."""

    connect_timeout_s: int = 3
    statement_timeout_s: float = 10.0
    acquire_timeout_s: float = 3.0
    reconnect_timeout_s: float = 5.0
    min_size: int = 1
    max_size: int = 4

    def __post_init__(self) -> None:
        if self.connect_timeout_s < MIN_CONNECT_TIMEOUT_S:
            raise ValueError(f"connect_timeout_s: at least {MIN_CONNECT_TIMEOUT_S}")
        if min(self.statement_timeout_s, self.acquire_timeout_s, self.reconnect_timeout_s) <= 0:
            raise ValueError("timeouts must be positive")
        if not 0 <= self.min_size <= self.max_size or self.max_size < 1:
            raise ValueError("pool sizes: 0 <= min_size <= max_size, max_size >= 1")

    @property
    def statement_timeout_ms(self) -> int:
        return max(1, round(self.statement_timeout_s * 1000))

    def connection_kwargs(self, *, autocommit: bool, extra_options: str = "") -> dict[str, Any]:
        """psycopg connect arguments: the connect timeout, the statement timeout (and any
        other `-c name=value` server settings in `extra_options`), autocommit."""
        options = f"-c statement_timeout={self.statement_timeout_ms} {extra_options}".strip()
        return {
            "connect_timeout": self.connect_timeout_s,
            "options": options,
            "autocommit": autocommit,
        }


DEFAULT_POOL = PoolOptions()
