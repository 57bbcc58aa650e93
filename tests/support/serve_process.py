"""`factledger serve` as a real process on loopback, configured only through the environment
(the test keys, a data folder of the test's own, and whatever the test adds): the one way the
tests that drive the service from outside (the blocking client, another language's client, a
framework integration, the MCP transport, several processes at once) start it and wait for it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
from support.api_harness import TEST_AUTH, TEST_SECRET, bearer, line, token

from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.http.auth import Role

# A loaded machine (CI beside other work) may need longer: the environment can say so.
STARTUP_LIMIT_S = float(os.environ.get("FACTLEDGER_TEST_STARTUP_LIMIT_S", "90"))
ROUTES_LOADED_WITHIN_S = 60.0  # a bound for a hang only


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_env(data_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process's environment; recall's budgets are ones no busy machine runs out of (the
    tests that serve a process ask what it answers; the budgets have tests of their own), unless
    `extra` says otherwise."""
    return {
        **os.environ,
        "FACTLEDGER_DATA_DIR": str(data_dir),
        "FACTLEDGER_AUTH__ENVIRONMENT": "test",
        "FACTLEDGER_AUTH__ISSUER": TEST_AUTH.issuer,
        "FACTLEDGER_AUTH__AUDIENCE": TEST_AUTH.audience,
        "FACTLEDGER_AUTH__KEYS": json.dumps([{"kid": "test", "secret": TEST_SECRET}]),
        "FACTLEDGER_RECALL__RECALL_BUDGET_S": "30",
        "FACTLEDGER_RECALL__CONTEXT_BUDGET_S": "30",
        **(extra or {}),
    }


@contextmanager
def serving(
    data_dir: Path, extra: Mapping[str, str] | None = None, *, name: str = "serve"
) -> Iterator[str]:
    """A ready `factledger serve` process; yields its base URL, terminates it on exit."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    entry = "from factledger.api.cli.main import main; main()"
    command = [sys.executable, "-c", entry, "serve", "--port", str(port)]
    log = data_dir / f"{name}-{port}.log"
    with running(command, serve_env(data_dir, extra), port, log) as base_url:
        yield base_url


@contextmanager
def serving_app(factory: str, log_dir: Path) -> Iterator[str]:
    """A ready uvicorn process serving the app `factory` ("module:function", a module under
    tests/) builds; yields its base URL, terminates it on exit."""
    log_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "--factory", factory]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    tests = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])}
    with running(command, env, port, log_dir / f"{factory.replace(':', '-')}-{port}.log") as url:
        yield url


@contextmanager
def running(command: list[str], env: Mapping[str, str], port: int, log: Path) -> Iterator[str]:
    """`command` (a server on loopback `port`) started and waited for until `/readyz` says
    ready; yields its base URL, terminates it on exit. Its stderr goes to `log`."""
    with log.open("wb") as sink:
        # A file, not a pipe: nobody drains a pipe while the tests run, and a full one blocks.
        process = subprocess.Popen(  # noqa: S603 - our own entry points, fixed arguments
            command, env=dict(env), stdout=subprocess.DEVNULL, stderr=sink
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(base_url, process, log)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=20)


def wait_until_ready(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the served process exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the served process did not become ready: {log.read_text()[-2000:]}")


def routes_loaded(base_url: str) -> None:
    """Returns once the served process's routes are in (they load after ready, ADR 0095):
    whichever of a module's tests runs first (in the file's order, or alone) then does not
    wait for the load within a client's default timeout on a loaded machine."""
    httpx.get(f"{base_url}/openapi.json", timeout=ROUTES_LOADED_WITHIN_S).raise_for_status()


def gauge(metrics: str, name: str) -> float:
    """The value of a gauge in a Prometheus exposition: `name` as it starts its line, labels
    included (`factledger_projection_lag_events{projection="profile"}`)."""
    for row in metrics.splitlines():
        if row.startswith(f"{name} "):
            return float(row.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} is not in the metrics")


SERVICE = bearer(token(Role.SERVICE))
AGENT = bearer(token(Role.AGENT, kind="lead", ref="crm-1"))
# Generous: the sync's poll interval is half a second; the bound only catches a lag that stays.
SETTLES_WITHIN_S = 30.0


def lag_settles_at_zero(base_url: str) -> float:
    """Polls `/metrics` until the sync lag and the profile views' lag read 0; fails with the
    last reading (their sum) otherwise."""
    deadline = time.monotonic() + SETTLES_WITHIN_S
    lag = -1.0
    while time.monotonic() < deadline:
        metrics = httpx.get(f"{base_url}/metrics").text
        lag = gauge(metrics, "factledger_sync_lag_events")
        lag += gauge(metrics, 'factledger_projection_lag_events{projection="profile"}')
        if lag == 0:
            return lag
        time.sleep(0.2)
    raise AssertionError(f"the lags stayed at {lag} in all for {SETTLES_WITHIN_S} s")


def record_a_session(base_url: str) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as http:
        body = {"kind": "lead", "external_ref": "crm-1"}
        assert http.post("/v1/subjects", json=body, headers=SERVICE).status_code == 201
        assert lag_settles_at_zero(base_url) == 0  # a registration alone is never synced
        start = {"session_id": "call-1", "channel": "voice"}
        assert http.post("/v1/subjects/me/sessions", json=start, headers=AGENT).is_success
        message = {"role": "subject", "text": "We moved to Supplier B in March."}
        # The subject's words come from the channel that heard them: the service's token.
        appended = http.post(**line("/v1/subjects/me/sessions/call-1/messages", message, AGENT))
        assert appended.is_success, appended.text
        ended = http.post("/v1/subjects/me/sessions/call-1/end", json={}, headers=AGENT)
        assert ended.is_success, ended.text


def postgres_serve_env(location: PostgresLocation) -> dict[str, str]:
    """Settings for `factledger serve` with everything in PostgreSQL + pgvector: the ledger,
    the views, the sync queue and the memory backend, each in a schema of its own; rate limits
    off (a test's cases all come from one address)."""
    suffix = uuid.uuid4().hex[:10]
    url = (
        f"postgresql://{location.user}:{location.password}@/{location.dbname}?host={location.host}"
    )
    return {
        "FACTLEDGER_DATABASE_URL": url,
        "FACTLEDGER_EVENT_STORE__KIND": "postgres",
        "FACTLEDGER_EVENT_STORE__SCHEMA_NAME": f"ledger_{suffix}",
        "FACTLEDGER_VIEWS__KIND": "postgres",
        "FACTLEDGER_VIEWS__SCHEMA_NAME": f"views_{suffix}",
        "FACTLEDGER_SYNC__STORE__KIND": "postgres",
        "FACTLEDGER_SYNC__STORE__SCHEMA_NAME": f"sync_{suffix}",
        "FACTLEDGER_BACKEND__KIND": "pgvector",
        "FACTLEDGER_BACKEND__SCHEMA_NAME": f"mem_{suffix}",
        "FACTLEDGER_EMBEDDER__KIND": "hashing",
        "FACTLEDGER_API__RATE_LIMIT__ENABLED": "false",
    }
