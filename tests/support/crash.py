"""A PostgreSQL server of its own that a test may crash: `kill -9` of its postmaster, as when
its host loses power or the OOM killer strikes, then a restart on the same data directory."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil

from factledger.adapters.postgres_server import EmbeddedPostgres, PostgresLocation

# The backends notice their postmaster's death within a second or two; a restart before they
# are gone finds the old shared memory still in use and fails.
BACKENDS_EXIT_WITHIN_S = 10.0


class CrashablePostgres:
    """An embedded server in `data_dir`, deleted on `stop` (never the session's server)."""

    def __init__(self, data_dir: Path) -> None:
        self._server = EmbeddedPostgres(data_dir, delete_on_stop=True)
        self.location: PostgresLocation = self._server.location

    def url(self) -> str:
        auth = f"{self.location.user}:{self.location.password}"
        host, port, db = self.location.host, self.location.port, self.location.dbname
        if host.startswith("/"):
            return f"postgresql://{auth}@:{port}/{db}?host={host}"
        return f"postgresql://{auth}@{host}:{port}/{db}"

    def kill(self) -> None:
        """SIGKILL to the postmaster; returns once its backends have exited too."""
        pid = self._server.postmaster_pid()
        assert pid is not None, "the server is not running"
        postmaster = psutil.Process(pid)
        backends = postmaster.children(recursive=True)
        os.kill(pid, signal.SIGKILL)
        postmaster.wait(timeout=BACKENDS_EXIT_WITHIN_S)
        _, alive = psutil.wait_procs(backends, timeout=BACKENDS_EXIT_WITHIN_S)
        for process in alive:  # pragma: no cover - only when a backend ignores its orphaning
            process.kill()

    def freeze(self) -> None:
        """SIGSTOP to the postmaster and its backends: a server that stalls (a host paused, a
        disk that stopped answering) without closing a connection."""
        for process in self._processes():
            process.suspend()

    def thaw(self) -> None:
        for process in self._processes():
            process.resume()

    def _processes(self) -> list[psutil.Process]:
        pid = self._server.postmaster_pid()
        assert pid is not None, "the server is not running"
        postmaster = psutil.Process(pid)
        return [postmaster, *postmaster.children(recursive=True)]

    def restart(self) -> None:
        self._server.ensure_running()
        # Every process keeps the address it was given: the server must come back on it.
        assert self._server.location == self.location, "the server moved"

    def stop(self) -> None:
        self._server.stop()
