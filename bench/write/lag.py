"""How far the views trail the ledger under the goal's write load: one embedded API process
(or the postgres topology: its API processes and workers, the positions read from PostgreSQL)
offered `appends_per_s` message appends and `ends_per_s` session ends (two proposals each),
paced, while this process samples the ledger's head and the views' position from their
SQLite files every `SAMPLE_S` and scrapes `factledger_projection_lag_events`.

A sample's lag in time is how long ago the oldest event the views lack was first seen at the
head (0 when they lack none), so its resolution is the sampling interval.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import re
import sqlite3
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import httpx
import psycopg

from factledger.adapters.postgres_server import PostgresLocation
from factledger.bench.load.servers import started
from factledger.bench.load.stats import percentile
from factledger.bench.machine import load_average
from factledger.bench.write.clients import Samples, proposal, timed
from factledger.bench.write.run import TokenFor, label, register

SAMPLE_S = 0.05
APPEND_CLIENTS = 16
END_CLIENTS = 8
_GAUGE = re.compile(r'^factledger_projection_lag_events\{projection="[^"]+"\} (\S+)$', re.M)


@dataclass(frozen=True, slots=True)
class LagFigures:
    build: str
    topology: str
    seconds: float
    appends: int
    ends: int
    failed: int
    events: int  # ledger events committed while the load ran
    p50_lag_s: float
    p95_lag_s: float
    max_lag_s: float
    max_gauge: int  # the largest lag the metric showed, in events
    load_average: str


async def _paced(rate: float, stop: asyncio.Event, step: Callable[[], Awaitable[None]]) -> None:
    """Calls `step` `rate` times a second until `stop` (never in bursts to catch up)."""
    interval, next_at = 1.0 / rate, time.perf_counter()
    while not stop.is_set():
        await step()
        next_at += interval
        delay = next_at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        else:
            next_at = time.perf_counter()


async def _appends(
    http: httpx.AsyncClient, subject: str, token: str, rate: float, s: Samples
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    base = f"/v1/subjects/{subject}/sessions"
    session_id = f"lag-{subject[:8]}"
    await http.post(base, json={"session_id": session_id, "channel": "chat"}, headers=headers)
    body = {"role": "subject", "text": "We buy from Acme."}

    async def step() -> None:
        sample, _ = await timed(http, "append", f"{base}/{session_id}/messages", body, headers)
        s.add(sample)

    await _paced(rate, s.stop, step)


async def _ends(http: httpx.AsyncClient, subject: str, token: str, rate: float, s: Samples) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    base = f"/v1/subjects/{subject}/sessions"
    count = 0

    async def step() -> None:
        nonlocal count
        count += 1
        session_id = f"lag-end-{subject[:8]}-{count}"
        await http.post(base, json={"session_id": session_id, "channel": "chat"}, headers=headers)
        said = {"role": "subject", "text": "We buy from Acme and pay 900 EUR a month."}
        await http.post(f"{base}/{session_id}/messages", json=said, headers=headers)
        end = {"proposals": [proposal("supplier", "Acme", session_id)]}
        end["proposals"].append(proposal("budget", "900 EUR", session_id))
        sample, _ = await timed(http, "end", f"{base}/{session_id}/end", end, headers)
        s.add(sample)

    await _paced(rate, s.stop, step)


def drive_paced(
    base_url: str, kind: str, subjects: list[tuple[str, str]], rate: float, seconds: float
) -> tuple[int, int]:
    """One client process: `kind` ("appends" or "ends") at `rate` a second in all, spread over
    its subjects; returns (answered, failed). A rate of 0 sends nothing."""

    async def run() -> tuple[int, int]:
        samples = Samples(max_requests=10**9)
        each = rate / len(subjects)
        client = _appends if kind == "appends" else _ends
        limits = httpx.Limits(max_connections=len(subjects) + 2)
        async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60.0) as http:
            tasks = [asyncio.create_task(client(http, s, t, each, samples)) for s, t in subjects]
            await asyncio.sleep(seconds)
            samples.stop.set()
            await asyncio.wait(tasks, timeout=60.0)
        ok = sum(1 for x in samples.items if 200 <= x.status < 300)
        return ok, len(samples.items) - ok

    return asyncio.run(run()) if rate > 0 else (0, 0)


class Sampler:
    """Reads the head of the ledger and the views' position: from their SQLite files (the
    embedded topology), or from PostgreSQL's tables (the postgres topology: the settings'
    default schemas)."""

    def __init__(self, data_dir: Path, database: PostgresLocation | None = None) -> None:
        self._ledger = data_dir / "ledger.sqlite"
        self._views = data_dir / "views.sqlite"
        self._database = database
        self.samples: list[tuple[float, int, int]] = []  # (time, head, views)

    def sample(self) -> None:
        head, views = self._read() if self._database is None else self._read_postgres()
        self.samples.append((time.perf_counter(), head, views))

    def _read(self) -> tuple[int, int]:
        with sqlite3.connect(f"file:{self._ledger}?mode=ro", uri=True) as ledger:
            head = ledger.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0] or 0
        with sqlite3.connect(f"file:{self._views}?mode=ro", uri=True) as views:
            row = views.execute("SELECT MAX(position) FROM view_tracking").fetchone()
        return int(head), int(row[0] or 0)

    def _read_postgres(self) -> tuple[int, int]:
        assert self._database is not None  # noqa: S101 - chosen by sample()
        with psycopg.connect(self._database.conninfo, autocommit=True) as conn:
            head = conn.execute("SELECT MAX(notification_id) FROM public.ledger_events")
            head_row = head.fetchone()
            views = conn.execute("SELECT MAX(position) FROM factledger_views.view_tracking")
            views_row = views.fetchone()
        return (
            int(cast("int", head_row[0] if head_row else 0) or 0),
            int(cast("int", views_row[0] if views_row else 0) or 0),
        )

    def lags_s(self) -> list[float]:
        """Each sample's lag in time (see the module docstring)."""
        first_seen: list[tuple[int, float]] = []  # (head, when first seen), heads ascending
        lags = []
        for at, head, views in self.samples:
            if not first_seen or head > first_seen[-1][0]:
                first_seen.append((head, at))
            lacking = views + 1
            if head < lacking:
                lags.append(0.0)
                continue
            seen = next(when for top, when in first_seen if top >= lacking)
            lags.append(at - seen)
        return lags


async def _scrape_gauge(base_url: str, token: str) -> int:
    async with httpx.AsyncClient(base_url=base_url, timeout=10.0) as http:
        text = (await http.get("/metrics", headers={"Authorization": f"Bearer {token}"})).text
    return max((int(float(v)) for v in _GAUGE.findall(text)), default=0)


@dataclass(frozen=True, slots=True)
class LagRun:
    """What a run needs: where, the load, and the credentials of the bench's clients."""

    workdir: Path
    server_env: dict[str, str]
    service: str
    agent_token: TokenFor
    appends_per_s: float = 400.0
    ends_per_s: float = 50.0
    seconds: float = 15.0


def measure_lag(run: LagRun, python: str, *, topology: str = "embedded") -> LagFigures:
    """Fresh servers of `python`'s install (one embedded API process, or the postgres
    topology's API processes and workers) under the paced load, sampled."""
    where = run.workdir / f"lag-{topology}-{time.monotonic_ns()}"
    with started(topology, where, run.server_env, python=python) as servers:
        refs = [f"lag-{time.time_ns()}-{n}" for n in range(APPEND_CLIENTS + END_CLIENTS)]
        ids = asyncio.run(register(servers.base_url, run.service, refs))
        subjects = [(s, run.agent_token(r)) for s, r in zip(ids, refs, strict=True)]
        sampler = Sampler(where / "data", servers.database)
        sampler.sample()
        spawn = multiprocessing.get_context("spawn")  # no fork of a process with threads
        with ProcessPoolExecutor(2, mp_context=spawn) as pool:
            appends = pool.submit(
                drive_paced, servers.base_url, "appends", subjects[:APPEND_CLIENTS],
                run.appends_per_s, run.seconds,
            )  # fmt: skip
            ends = pool.submit(
                drive_paced, servers.base_url, "ends", subjects[APPEND_CLIENTS:],
                run.ends_per_s, run.seconds,
            )  # fmt: skip
            paced = appends if run.appends_per_s > 0 else ends  # runs for `seconds`
            gauges = asyncio.run(_sample_while(sampler, servers.base_url, run.service, paced))
            (appended, append_failed), (ended, end_failed) = appends.result(), ends.result()
    ordered = sorted(sampler.lags_s())
    return LagFigures(
        label(python),
        topology,
        run.seconds,
        appended,
        ended,
        append_failed + end_failed,
        sampler.samples[-1][1] - sampler.samples[0][1],
        percentile(ordered, 0.50),
        percentile(ordered, 0.95),
        ordered[-1] if ordered else 0.0,
        max(gauges, default=0),
        load_average(),
    )


async def _sample_while(
    sampler: Sampler, base_url: str, token: str, running: Future[tuple[int, int]]
) -> list[int]:
    """Samples the files every `SAMPLE_S` and the gauge every tenth time until `running` ends."""
    gauges: list[int] = []
    n = 0
    while not running.done():
        await asyncio.to_thread(sampler.sample)
        if n % 10 == 0:
            gauges.append(await _scrape_gauge(base_url, token))
        n += 1
        await asyncio.sleep(SAMPLE_S)
    return gauges
