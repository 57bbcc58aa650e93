"""The processes under load, on loopback: the embedded default (one `factledger serve`) or
PostgreSQL (the embedded server, one `factledger serve --workers 2` and two
`factledger worker`). Each level gets fresh processes and a fresh data directory."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from factledger.adapters.postgres_server import EmbeddedPostgres

TOPOLOGIES = ("embedded", "postgres")
READY_TIMEOUT_S = 180.0
ENTRY = "from factledger.api.cli.main import main; main()"


@dataclass(frozen=True, slots=True)
class Servers:
    """Where the API listens and which processes to measure."""

    base_url: str
    pids: tuple[int, ...]

    def rss_mib(self) -> float:
        """Resident memory of every process and its children, in MiB."""
        seen: set[int] = set()
        total_kib = 0
        stack = list(self.pids)
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            seen.add(pid)
            total_kib += _rss_kib(pid)
            stack.extend(_children(pid))
        return total_kib / 1024


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        tasks = Path(f"/proc/{pid}/task").iterdir()
        return [int(c) for t in tasks for c in (t / "children").read_text().split()]
    except OSError:
        return []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def started(
    topology: str,
    workdir: Path,
    auth_env: Mapping[str, str],
    *,
    python: str = sys.executable,
    workers: int = 2,
) -> Iterator[Servers]:
    """Starts the topology, waits until it is ready, stops everything on exit; `python` is
    the servers' interpreter (another install's, for a baseline in the same run); `workers`
    is how many `factledger worker` processes the postgres topology runs."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **auth_env, "FACTLEDGER_DATA_DIR": str(workdir / "data")}
    env.setdefault("FACTLEDGER_LOG_JSON", "true")
    port = free_port()
    with ExitStack() as stack:
        if topology == "postgres":
            database = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
            stack.callback(database.stop)
            env.update(_postgres_env(database))
            syncing = [
                stack.enter_context(_process(python, ["worker"], env, workdir / f"worker-{n}.log"))
                for n in range(workers)
            ]
            serve = ["serve", "--port", str(port), "--workers", "2"]
        else:
            syncing = []
            serve = ["serve", "--port", str(port)]
        api = stack.enter_context(_process(python, serve, env, workdir / "serve.log"))
        base_url = f"http://127.0.0.1:{port}"
        _wait_until_ready(base_url, api, workdir / "serve.log")
        yield Servers(base_url, (api.pid, *(w.pid for w in syncing)))


def _postgres_env(database: EmbeddedPostgres) -> dict[str, str]:
    where = database.location
    url = f"postgresql://{where.user}:{where.password}@/{where.dbname}?host={where.host}"
    return {
        "FACTLEDGER_DATABASE_URL": url,
        "FACTLEDGER_EVENT_STORE__KIND": "postgres",
        "FACTLEDGER_VIEWS__KIND": "postgres",
        "FACTLEDGER_SHORT_TERM__KIND": "postgres",
        "FACTLEDGER_SYNC__STORE__KIND": "postgres",
        "FACTLEDGER_BACKEND__KIND": "pgvector",
        # Two API processes would need one shared console session key; the bench uses none.
        "FACTLEDGER_CONSOLE__ENABLED": "false",
    }


@contextmanager
def _process(
    python: str, args: list[str], env: Mapping[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as sink:
        # A file, not a pipe: nobody drains a pipe during the run, and a full one blocks.
        process = subprocess.Popen(  # noqa: S603 - this interpreter, our entry point
            [python, "-c", ENTRY, *args], env=dict(env), stdout=sink, stderr=sink
        )
    try:
        yield process
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_ready(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the server exited with {process.returncode}: {tail}")
        try:
            if httpx.get(f"{base_url}/readyz", timeout=1).status_code == httpx.codes.OK:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"not ready within {READY_TIMEOUT_S:.0f} s")
