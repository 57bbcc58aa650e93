"""`PostgresServer`: the PostgreSQL server of one runtime, and the only owner of an embedded one.

Every part that keeps its data in PostgreSQL (event store, keys, views, session buffer, sync
store, idempotency store, pgvector) asks it for the location. With `DATABASE_URL` set that is
the URL; otherwise the embedded server under `<data_dir>/pg`, started the first time a part
asks and stopped by `close`, which the runtime calls after closing every part. The parts never
stop the server themselves: closing one of them must not pull it from under the others.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from factledger.adapters.postgres_options import PoolOptions
from factledger.api.settings import Settings

if TYPE_CHECKING:  # the driver is imported when a part first asks for the server
    from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation


class PostgresServer:
    """Where the runtime's PostgreSQL listens; starts and stops an embedded one, once."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._location: PostgresLocation | None = None
        self._embedded: EmbeddedPostgres | None = None

    def location(self) -> PostgresLocation:
        """The configured server's location (the embedded server is started on first call)."""
        if self._location is None:
            # Imported here: a runtime with no PostgreSQL store never imports the driver.
            from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation

            url = self._settings.database_url
            if url is not None:
                self._location = PostgresLocation.from_url(url.get_secret_value())
            else:
                self._embedded = EmbeddedPostgres(
                    self._settings.data_dir / "pg", delete_on_stop=False
                )
                self._location = self._embedded.location
        return self._location

    def read_location(self) -> PostgresLocation | None:
        """The standby that serves reads (`database_read_url`), None without one; only with
        `database_url` (an embedded server has no standby)."""
        url = self._settings.database_read_url
        if url is None or self._settings.database_url is None:
            return None
        from factledger.adapters.postgres_server import PostgresLocation

        return PostgresLocation.from_url(url.get_secret_value())

    def pool(self, *, max_size: int | None = None) -> PoolOptions:
        """Sizes and timeouts of one store's pool (`settings.postgres`); `max_size` overrides
        the common maximum for a store that sizes its own pool (events, pgvector)."""
        s = self._settings.postgres
        top = s.pool_max_size if max_size is None else max_size
        return PoolOptions(
            connect_timeout_s=s.connect_timeout_s,
            statement_timeout_s=s.statement_timeout_s,
            acquire_timeout_s=s.acquire_timeout_s,
            reconnect_timeout_s=s.reconnect_timeout_s,
            min_size=min(s.pool_min_size, top),
            max_size=top,
        )

    def close(self) -> None:
        """Stops the embedded server if this runtime started it; its data stays on disk."""
        embedded, self._embedded, self._location = self._embedded, None, None
        if embedded is not None:
            embedded.stop()

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
