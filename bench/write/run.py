"""Runs the write benchmark's parts against fresh servers and gathers their figures."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import httpx

from factledger.bench.load.agent import Sample
from factledger.bench.load.servers import started
from factledger.bench.load.stats import percentile
from factledger.bench.machine import load_average
from factledger.bench.write.clients import Client, appender, drive, ender
from factledger.bench.write.history import (
    SIZES,
    appends_by_size,
    ends_and_decisions_by_size,
    median_ms,
    overhead_median_ms,
    seed,
    use_case_median_ms,
)
from factledger.bench.write.searchable import one_session

TENANT = "load"
TokenFor = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class Rate:
    """One closed-loop part: how many answered per second and how fast."""

    part: str
    build: str  # this install or the baseline
    topology: str
    clients: int
    ok: int
    failed: dict[int, int]  # status (0: no answer) -> count
    seconds: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    in_app_p50_ms: float
    load_average: str
    # In the app but outside the use case (routing, auth, subject check, idempotency,
    # serialisation); None when the server does not say (a baseline without `use;dur`).
    overhead_p50_ms: float | None = None
    # The server processes' CPU time (user + system) per answered request: unlike the rate,
    # it hardly depends on how much of the machine other work takes. None off Linux.
    cpu_ms_per_answer: float | None = None

    @property
    def per_second(self) -> float:
        return self.ok / self.seconds if self.seconds else 0.0


@dataclass(frozen=True, slots=True)
class History:
    """One request kind on subjects of one size, sequential: medians at the client, inside
    the app and in the use case (None when the server does not say)."""

    request: str  # append, end or decision
    size: int
    build: str
    client_p50_ms: float
    in_app_p50_ms: float
    use_case_p50_ms: float | None
    overhead_p50_ms: float | None  # in the app, outside the use case and idempotency record
    load_average: str


def rate_of(
    part: str, build: str, topology: str, clients: int, samples: list[Sample], seconds: float
) -> Rate:
    ok = sorted(s.seconds for s in samples if 200 <= s.status < 300)
    failed = Counter(s.status for s in samples if not 200 <= s.status < 300)
    in_app = sorted(s.in_app_s for s in samples if s.in_app_s is not None and s.status < 300)
    outside = sorted(s.overhead_s for s in samples if s.overhead_s is not None and s.status < 300)
    return Rate(
        part,
        build,
        topology,
        clients,
        len(ok),
        dict(failed),
        seconds,
        percentile(ok, 0.50) * 1e3,
        percentile(ok, 0.95) * 1e3,
        percentile(ok, 0.99) * 1e3,
        percentile(in_app, 0.50) * 1e3,
        load_average(),
        percentile(outside, 0.50) * 1e3 if outside else None,
    )


async def register(base_url: str, service: str, refs: list[str]) -> list[str]:
    headers = {"Authorization": f"Bearer {service}"}
    ids = []
    async with httpx.AsyncClient(base_url=base_url, timeout=60.0) as http:
        for ref in refs:
            body = {"kind": "lead", "external_ref": ref}
            response = await http.post("/v1/subjects", json=body, headers=headers)
            response.raise_for_status()
            ids.append(str(response.json()["subject_id"]))
    return ids


def drive_part(
    base_url: str, part: str, subjects: list[tuple[str, str]], seconds: float, max_requests: int
) -> tuple[list[Sample], float]:
    """One client process's share of the clients (top level: pickled into the process)."""
    return asyncio.run(
        drive(base_url, PARTS[part], subjects, seconds=seconds, max_requests=max_requests)
    )


def closed_loop(
    part: str,
    *,
    client_processes: int,
    topology: str,
    clients: int,
    seconds: float,
    max_requests: int,
    workdir: Path,
    server_env: dict[str, str],
    service: str,
    agent_token: TokenFor,
    python: str,
    workers: int = 2,
) -> Rate:
    """Fresh servers, one subject per client, then the part's clients for the bounded time,
    spread over `client_processes` so that the load generator is not what is measured."""
    where = workdir / f"{part}-{topology}-{clients}-{time.monotonic_ns()}"
    with started(topology, where, server_env, python=python, workers=workers) as servers:
        refs = [f"{part}-{int(time.time())}-{n}" for n in range(clients)]
        ids = asyncio.run(register(servers.base_url, service, refs))
        cpu_before = cpu_seconds(servers.pids)
        # One agent token per subject: rate limits are per principal, as for real agents.
        subjects = [(subject, agent_token(ref)) for subject, ref in zip(ids, refs, strict=True)]
        parts = [subjects[n::client_processes] for n in range(client_processes)]
        parts = [chunk for chunk in parts if chunk]
        spawn = multiprocessing.get_context("spawn")  # no fork of a process with threads
        with ProcessPoolExecutor(len(parts), mp_context=spawn) as pool:
            futures = [
                pool.submit(drive_part, servers.base_url, part, chunk, seconds, max_requests)
                for chunk in parts
            ]
            results = [future.result() for future in futures]
        cpu_after = cpu_seconds(servers.pids)
        samples = [sample for items, _ in results for sample in items]
        active = max(seconds_active for _, seconds_active in results)
    rate = rate_of(part, label(python), topology, clients, samples, active)
    if cpu_before is None or cpu_after is None or not rate.ok:
        return rate
    return replace(rate, cpu_ms_per_answer=(cpu_after - cpu_before) * 1e3 / rate.ok)


def cpu_seconds(pids: tuple[int, ...]) -> float | None:
    """User and system CPU seconds the processes have used so far (None off Linux)."""
    total = 0.0
    try:
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return total


def label(python: str) -> str:
    return "this" if python == sys.executable else "baseline"


PARTS: dict[str, Client] = {"appends": appender, "ends": ender}


def history(
    *,
    rounds: int,
    workdir: Path,
    server_env: dict[str, str],
    service: str,
    reviewer: str,
    python: str,
) -> list[History]:
    """One embedded server; subjects of each size; then appends, session ends and decisions
    (a reviewer's approval), the sizes taking turns."""
    where = workdir / f"history-{time.monotonic_ns()}"
    with started("embedded", where, server_env, python=python) as servers:

        async def run() -> dict[str, dict[int, list[Sample]]]:
            refs = [f"history-{int(time.time())}-{size}" for size in SIZES]
            ids = await register(servers.base_url, service, refs)
            subjects = dict(zip(SIZES, ids, strict=True))
            async with httpx.AsyncClient(base_url=servers.base_url, timeout=60.0) as http:
                for size, subject in subjects.items():
                    await seed(http, subject, service, size)
                appends = await appends_by_size(http, subjects, service, rounds)
                ends, decisions = await ends_and_decisions_by_size(
                    http, subjects, service, reviewer, rounds
                )
                return {"append": appends, "end": ends, "decision": decisions}

        by_request = asyncio.run(run())
    return [
        History(
            request,
            size,
            label(python),
            median_ms(s, in_app=False),
            median_ms(s, in_app=True),
            use_case_median_ms(s),
            overhead_median_ms(s),
            load_average(),
        )
        for request, by_size in by_request.items()
        for size, s in by_size.items()
    ]


def searchable(
    *,
    sessions: int,
    workdir: Path,
    server_env: dict[str, str],
    service: str,
    python: str,
    topology: str = "embedded",
) -> Rate:
    """Fresh servers of `topology` (on PostgreSQL the sync runs in worker processes of its
    own); sessions one after the other, each on a subject of its own (so that no earlier fact
    competes for the recall's few notes)."""
    where = workdir / f"searchable-{topology}-{time.monotonic_ns()}"
    with started(topology, where, server_env, python=python) as servers:

        async def run() -> list[Sample]:
            refs = [f"ingest-{time.time_ns()}-{n}" for n in range(sessions)]
            subjects = await register(servers.base_url, service, refs)
            async with httpx.AsyncClient(base_url=servers.base_url, timeout=60.0) as http:
                return [
                    await one_session(http, subject, service, n, by_name=topology == "postgres")
                    for n, subject in enumerate(subjects)
                ]

        started_at = time.perf_counter()
        samples = asyncio.run(run())
    return rate_of(
        "searchable", label(python), topology, 1, samples, time.perf_counter() - started_at
    )
