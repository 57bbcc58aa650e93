"""Runs the load levels: per topology and number of clients, fresh servers, agents for a
bounded time and count, then the figures. Loopback only; every level stops by itself.

The agents of a level are spread over a few client processes, so that the load generator's
own event loop is not what the latencies measure; each process also records how late its loop
wakes up (its lag), which the tables show beside the latencies.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

from factledger.bench.load.agent import (
    Agent,
    AgentSetup,
    ChannelSetup,
    Recorder,
    Sample,
    TokenFor,
    measure_lag,
)
from factledger.bench.load.servers import started
from factledger.bench.load.stats import LevelFigures, figures
from factledger.bench.machine import load_average

MAX_SECONDS = 600.0
# Generous: the models' loads on two busy cores; only a hang should fail here.
WARM_UP_TIMEOUT_S = 120.0
MAX_REQUESTS = 1_000_000
# Agents still in a request when the level ends get this long to finish it.
DRAIN_S = 35.0


@dataclass(frozen=True, slots=True)
class LoadConfig:
    """What to run: topologies x client counts, each for `seconds` or `max_requests`."""

    topologies: tuple[str, ...]
    clients: tuple[int, ...]
    seconds: float
    max_requests: int
    think_s: float
    workdir: Path
    client_processes: int = 2
    seed: int = 7

    def __post_init__(self) -> None:
        if not 0 < self.seconds <= MAX_SECONDS:
            raise ValueError(f"seconds must be in (0, {MAX_SECONDS:.0f}]")
        if not 0 < self.max_requests <= MAX_REQUESTS:
            raise ValueError(f"max_requests must be in (0, {MAX_REQUESTS}]")
        if not 1 <= self.client_processes <= 16:
            raise ValueError("client_processes must be in [1, 16]")


@dataclass(frozen=True, slots=True)
class Credentials:
    """The server's token settings as environment variables, and how to mint tokens."""

    server_env: Mapping[str, str]
    service_token: str
    agent_token: TokenFor
    reviewer_token: str | None = None  # for decisions (approvals) where a part makes them


@dataclass(frozen=True, slots=True)
class PartResult:
    """What one client process measured."""

    samples: list[Sample]
    lags: list[float]
    seconds: float


def run_load(
    config: LoadConfig, credentials: Credentials, report: Callable[[LevelFigures], None]
) -> list[LevelFigures]:
    levels = []
    spawn = multiprocessing.get_context("spawn")  # no fork of a process with threads
    with ProcessPoolExecutor(config.client_processes, mp_context=spawn) as pool:
        for topology in config.topologies:
            for clients in config.clients:
                workdir = config.workdir / f"{topology}-{clients}"
                with started(topology, workdir, credentials.server_env) as servers:
                    setups = asyncio.run(_register(servers.base_url, clients, config, credentials))
                    asyncio.run(warm_up(servers.base_url, setups[0]))
                    parts = _split(setups, config.client_processes)
                    per_part = max(1, config.max_requests // len(parts))
                    futures = [
                        pool.submit(drive_part, servers.base_url, part, config.seconds, per_part)
                        for part in parts
                    ]
                    results = [future.result() for future in futures]
                    level = figures(
                        topology,
                        clients,
                        max(r.seconds for r in results),
                        [s for r in results for s in r.samples],
                        lags=[lag for r in results for lag in r.lags],
                        rss_mib=servers.rss_mib(),
                        load_average=load_average(),
                    )
                report(level)
                levels.append(level)
    return levels


def _split(setups: list[AgentSetup], parts: int) -> list[list[AgentSetup]]:
    chunks = [setups[n::parts] for n in range(parts)]
    return [chunk for chunk in chunks if chunk]


def drive_part(
    base_url: str, setups: Sequence[AgentSetup], seconds: float, max_requests: int
) -> PartResult:
    """One client process: its agents for `seconds` or `max_requests` (top level: pickled)."""
    return asyncio.run(_drive(base_url, setups, seconds, max_requests))


async def _drive(
    base_url: str, setups: Sequence[AgentSetup], seconds: float, max_requests: int
) -> PartResult:
    size = len(setups) + 4
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30.0) as http:
        recorder = Recorder(max_requests=max_requests)
        lags: list[float] = []
        started_at = time.perf_counter()
        tasks = [asyncio.create_task(Agent(http, setup, recorder).run()) for setup in setups]
        monitor = asyncio.create_task(measure_lag(lags, recorder.stop))
        try:
            await asyncio.wait_for(recorder.stop.wait(), timeout=seconds)
        except TimeoutError:
            recorder.stop.set()
        active_s = time.perf_counter() - started_at
        _, pending = await asyncio.wait(tasks, timeout=DRAIN_S)
        for task in pending:
            task.cancel()
        await asyncio.wait([monitor, *pending])
    return PartResult(recorder.samples, lags, active_s)


async def warm_up(base_url: str, setup: AgentSetup) -> int:
    """One session of the first agent, untimed and not counted: the server loads its models
    after ready (the embedder, the screens' encoders), and the first requests that need them
    wait for the loads, which a measure of the steady state must not count. Returns how many
    requests it made."""
    recorder = Recorder(max_requests=1_000)
    async with httpx.AsyncClient(base_url=base_url, timeout=WARM_UP_TIMEOUT_S) as http:
        await Agent(http, setup, recorder).session("load-warm-up")
    return len(recorder.samples)


async def _register(
    base_url: str, clients: int, config: LoadConfig, credentials: Credentials
) -> list[AgentSetup]:
    headers = {"Authorization": f"Bearer {credentials.service_token}"}
    setups = []
    run_id = f"{os.getpid()}-{int(time.time())}"
    async with httpx.AsyncClient(base_url=base_url, timeout=30.0) as http:
        for n in range(clients):
            ref = f"load-{run_id}-{n}"
            body = {"kind": "lead", "external_ref": ref}
            response = await http.post("/v1/subjects", json=body, headers=headers)
            response.raise_for_status()
            token = credentials.agent_token(ref)
            channel = ChannelSetup(response.json()["subject_id"], credentials.service_token)
            setups.append(AgentSetup(ref, token, config.think_s, config.seed + n, channel))
    return setups
