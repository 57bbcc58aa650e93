"""Runs the load levels: per topology and number of clients, fresh servers, agents for a
bounded time and count, then the figures. Loopback only; every level stops by itself."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from factledger.bench.load.agent import Agent, AgentSetup, Recorder, Sample, TokenFor
from factledger.bench.load.servers import started
from factledger.bench.load.stats import LevelFigures, figures
from factledger.bench.machine import load_average

MAX_SECONDS = 600.0
MAX_REQUESTS = 1_000_000


@dataclass(frozen=True, slots=True)
class LoadConfig:
    """What to run: topologies x client counts, each for `seconds` or `max_requests`."""

    topologies: tuple[str, ...]
    clients: tuple[int, ...]
    seconds: float
    max_requests: int
    think_s: float
    workdir: Path
    seed: int = 7

    def __post_init__(self) -> None:
        if not 0 < self.seconds <= MAX_SECONDS:
            raise ValueError(f"seconds must be in (0, {MAX_SECONDS:.0f}]")
        if not 0 < self.max_requests <= MAX_REQUESTS:
            raise ValueError(f"max_requests must be in (0, {MAX_REQUESTS}]")


@dataclass(frozen=True, slots=True)
class Credentials:
    """The server's token settings as environment variables, and how to mint tokens."""

    server_env: Mapping[str, str]
    service_token: str
    agent_token: TokenFor


def run_load(
    config: LoadConfig, credentials: Credentials, report: Callable[[LevelFigures], None]
) -> list[LevelFigures]:
    levels = []
    for topology in config.topologies:
        for clients in config.clients:
            workdir = config.workdir / f"{topology}-{clients}"
            with started(topology, workdir, credentials.server_env) as servers:
                samples, seconds = asyncio.run(
                    _drive(servers.base_url, clients, config, credentials)
                )
                level = figures(
                    topology,
                    clients,
                    seconds,
                    samples,
                    rss_mib=servers.rss_mib(),
                    load_average=load_average(),
                )
            report(level)
            levels.append(level)
    return levels


async def _drive(
    base_url: str, clients: int, config: LoadConfig, credentials: Credentials
) -> tuple[list[Sample], float]:
    limits = httpx.Limits(max_connections=clients + 4, max_keepalive_connections=clients + 4)
    timeout = httpx.Timeout(30.0)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=timeout) as http:
        setups = await _register(http, clients, config, credentials)
        recorder = Recorder(max_requests=config.max_requests)
        agents = [Agent(http, setup, recorder) for setup in setups]
        started_at = time.perf_counter()
        tasks = [asyncio.create_task(agent.run()) for agent in agents]
        try:
            await asyncio.wait_for(recorder.stop.wait(), timeout=config.seconds)
        except TimeoutError:
            recorder.stop.set()
        # Agents finish the request they are in; a bounded wait, then they are cancelled.
        _, pending = await asyncio.wait(tasks, timeout=35.0)
        for task in pending:
            task.cancel()
        seconds = time.perf_counter() - started_at
    return recorder.samples, seconds


async def _register(
    http: httpx.AsyncClient, clients: int, config: LoadConfig, credentials: Credentials
) -> list[AgentSetup]:
    headers = {"Authorization": f"Bearer {credentials.service_token}"}
    setups = []
    run_id = f"{os.getpid()}-{int(time.time())}"
    for n in range(clients):
        ref = f"load-{run_id}-{n}"
        body = {"kind": "lead", "external_ref": ref}
        response = await http.post("/v1/subjects", json=body, headers=headers)
        response.raise_for_status()
        setups.append(
            AgentSetup(ref, credentials.agent_token(ref), config.think_s, config.seed + n)
        )
    return setups
