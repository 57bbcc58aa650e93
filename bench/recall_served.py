"""Recall over HTTP on a served process: what a request costs outside `Recall.recall`.

Starts `factledger serve` (embedded topology, hashing embedder, so the server's CPU goes to
the request path rather than a model), records a session for one lead, then sends recalls
one at a time over loopback, alternating with `/healthz` (the bare HTTP round trip). The
server's `Server-Timing` header splits each recall: `app` (in the app, from the request
context middleware), `use` (inside `Recall.recall`); `app - use` is the time outside recall
in the app (routing, auth, dependency resolution, the subject check, serialisation), measured
on the served process itself.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx

from factledger.api.http.auth import Role, SubjectClaim, TokenRequest, mint_token
from factledger.api.settings.access import AuthSettings
from factledger.bench.serve_start import READY_TIMEOUT_S, default_executable, free_port, stop

SECRET = "recall-served-bench-" + "x" * 40
ISSUER = "factledger-recall-bench"
LINES = (
    "We moved to Supplier B in March.",
    "We live in Porto now.",
    "Our budget is about 40k for the year.",
)
QUERIES = ("who is their supplier", "where do they live", "what is the budget")


@dataclass(frozen=True, slots=True)
class Served:
    requests: int
    load_before: float
    load_after: float
    rows: list[tuple[str, float, float]]  # figure, p50, p95


def served_env(data_dir: Path) -> dict[str, str]:
    """A served process that takes the bench's tokens and never sheds its requests."""
    return {
        **os.environ,
        "FACTLEDGER_DATA_DIR": str(data_dir),
        "FACTLEDGER_LOG_JSON": "true",
        "FACTLEDGER_AUTH__ENVIRONMENT": "test",
        "FACTLEDGER_AUTH__ISSUER": ISSUER,
        "FACTLEDGER_AUTH__KEYS": json.dumps([{"kid": "bench", "secret": SECRET}]),
        "FACTLEDGER_API__RATE_LIMIT__PRINCIPAL_BURST": "1000000",
        "FACTLEDGER_API__RATE_LIMIT__PRINCIPAL_PER_S": "1000000",
        "FACTLEDGER_API__RATE_LIMIT__TENANT_BURST": "1000000",
        "FACTLEDGER_API__RATE_LIMIT__TENANT_PER_S": "1000000",
    }


def _env(data_dir: Path) -> dict[str, str]:
    return {**served_env(data_dir), "FACTLEDGER_EMBEDDER__KIND": "hashing"}


def bearer(claim: SubjectClaim | None) -> dict[str, str]:
    """Headers with a token of tenant `bench`: an agent's bound to `claim`, or (None) the
    service's."""
    auth = AuthSettings.model_validate(
        {"environment": "test", "issuer": ISSUER, "keys": [{"kid": "bench", "secret": SECRET}]}
    )
    role, principal = (Role.SERVICE, "svc") if claim is None else (Role.AGENT, "agent")
    token = mint_token(auth, TokenRequest(role, "bench", principal, claim, timedelta(hours=2)))
    return {"Authorization": f"Bearer {token}"}


def _tokens() -> tuple[dict[str, str], dict[str, str]]:
    return bearer(SubjectClaim(kind="lead", ref="r1")), bearer(None)


@contextmanager
def serving(
    env: dict[str, str], executable: Path | None = None
) -> Iterator[tuple[httpx.Client, subprocess.Popen[bytes]]]:
    """`factledger serve` on a free loopback port with `env`, ready; stopped on the way out.
    `executable`: another install's `factledger` (another build, measured beside this one's);
    this install's by default."""
    port = free_port()
    program = executable or default_executable()
    process = subprocess.Popen(  # noqa: S603 - an install's own entry point, given by the operator
        [str(program), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            _ready(http, process)
            yield http, process
    finally:
        stop(process)


def _ready(http: httpx.Client, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"factledger serve exited with {process.returncode}")
        try:
            if http.get("/readyz").status_code == httpx.codes.OK:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"not ready within {READY_TIMEOUT_S:.0f} s")


def _seed(http: httpx.Client, agent: dict[str, str], service: dict[str, str]) -> None:
    body = {"kind": "lead", "external_ref": "r1"}
    registered = http.post("/v1/subjects", json=body, headers=service)
    registered.raise_for_status()
    subject_id = registered.json()["subject_id"]
    sessions = "/v1/subjects/me/sessions"
    http.post(sessions, json={"session_id": "s1", "channel": "chat"}, headers=agent)
    heard = f"/v1/subjects/{subject_id}/sessions/s1/messages"
    for text in LINES:  # the subject's words come from the channel: the service's token
        said = {"role": "subject", "text": text}
        http.post(heard, json=said, headers=service).raise_for_status()
    http.post(f"{sessions}/s1/end", json={}, headers=agent).raise_for_status()


def timing_parts(header: str) -> dict[str, float]:
    found = {}
    for entry in header.split(","):
        name, _, param = entry.strip().partition(";")
        if param.startswith("dur="):
            found[name] = float(param[4:])
    return found


def run(*, requests: int = 500, warm_up: int = 50) -> Served:
    load_before = os.getloadavg()[0]
    agent, service = _tokens()
    figures: dict[str, list[float]] = {
        k: [] for k in ("recall", "healthz", "app", "use", "outside", "wire")
    }
    with (
        tempfile.TemporaryDirectory(prefix="factledger-recall-served-") as workdir,
        serving(_env(Path(workdir))) as (http, _),
    ):
        _seed(http, agent, service)
        for n in range(requests + warm_up):
            query = {"query": QUERIES[n % len(QUERIES)]}
            started = time.perf_counter()
            answer = http.post("/v1/subjects/me/recall", json=query, headers=agent)
            recall_ms = (time.perf_counter() - started) * 1e3
            answer.raise_for_status()
            started = time.perf_counter()
            http.get("/healthz").raise_for_status()
            healthz_ms = (time.perf_counter() - started) * 1e3
            if n < warm_up:
                continue
            parts = timing_parts(answer.headers.get("server-timing", ""))
            figures["recall"].append(recall_ms)
            figures["healthz"].append(healthz_ms)
            figures["app"].append(parts["app"])
            figures["use"].append(parts["use"])
            figures["outside"].append(parts["app"] - parts["use"])
            figures["wire"].append(recall_ms - parts["app"])
    names = {
        "recall": "recall over HTTP, at the client",
        "healthz": "`/healthz` round trip, at the client",
        "app": "recall in the app (`Server-Timing: app`)",
        "use": "inside `Recall.recall` (`use`)",
        "outside": "**in the app outside `Recall.recall` (app - use)**",
        "wire": "outside the app (client wall - app)",
    }
    rows = [
        (names[k], round(statistics.median(v), 2), round(statistics.quantiles(v, n=20)[18], 2))
        for k, v in figures.items()
    ]
    return Served(requests, load_before, os.getloadavg()[0], rows)


def render(served: Served) -> str:
    return "\n".join(
        [
            f"Recall on a served process (embedded, hashing embedder), {served.requests} "
            f"recalls one at a time, each followed by a /healthz; load "
            f"{served.load_before:.1f} -> {served.load_after:.1f}",
            "",
            "| figure | p50 ms | p95 ms |",
            "| --- | --- | --- |",
            *(f"| {name} | {p50} | {p95} |" for name, p50, p95 in served.rows),
        ]
    )
