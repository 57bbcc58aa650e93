"""One simulated agent: what a chat or voice agent asks of factledger during its sessions.

Per session: start it, fetch the context, then per turn append the subject's message, recall
and append the agent's answer; end the session with one proposal, then read the profile. A
short, jittered think time separates requests (a real agent also waits for its model).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

TURNS = 4
RETRY_TOTAL_S = 12.0  # the Python client's default total (`RetryPolicy.total_s`)
SUPPLIERS = ("Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli", "Vandelay")
QUERIES = (
    "which supplier do they use?",
    "what is their budget?",
    "when do they plan to buy?",
    "who decides on purchases?",
)


@dataclass(frozen=True, slots=True)
class Sample:
    """One request: its route, status, latency and, for recall and context, the degraded
    reason (None when complete)."""

    route: str
    status: int
    seconds: float
    degraded: str | None = None
    in_app_s: float | None = None  # the server's `Server-Timing: app;dur=`: time in the app
    retries: int = 0  # 503s with Retry-After retried before this answer
    error: str | None = None  # the transport error's type, when there was no answer
    use_case_s: float | None = None  # `Server-Timing: use;dur=`: the use case's share of it
    idempotency_s: float | None = None  # `idem;dur=`: the key's claim and saved response

    @property
    def overhead_s(self) -> float | None:
        """Time in the app outside the use case and the idempotency record (None unless the
        server said so: an older server sends only `app`)."""
        if self.in_app_s is None or self.use_case_s is None:
            return None
        return self.in_app_s - self.use_case_s - (self.idempotency_s or 0.0)


@dataclass(slots=True)
class Recorder:
    """Samples of one run, bounded in count; `stop` is set by the deadline or the bound."""

    max_requests: int
    samples: list[Sample] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, sample: Sample) -> None:
        self.samples.append(sample)
        if len(self.samples) >= self.max_requests:
            self.stop.set()


@dataclass(frozen=True, slots=True)
class ChannelSetup:
    """The platform's channel that relays the subject's lines: the subject's id and the
    service token (an agent's token may not write the subject's words)."""

    subject_id: str
    service_token: str


@dataclass(frozen=True, slots=True)
class AgentSetup:
    """Who the agent is: its own subject (`ref`) and the tokens to act with."""

    ref: str
    agent_token: str
    think_s: float
    seed: int
    channel: ChannelSetup


class Agent:
    """Runs sessions until the recorder says stop."""

    def __init__(self, http: httpx.AsyncClient, setup: AgentSetup, recorder: Recorder) -> None:
        self._http = http
        self._setup = setup
        self._recorder = recorder
        self._random = random.Random(setup.seed)
        self._headers = {"Authorization": f"Bearer {setup.agent_token}"}
        self._channel = {"Authorization": f"Bearer {setup.channel.service_token}"}

    async def run(self) -> None:
        session = 0
        while not self._recorder.stop.is_set():
            session += 1
            await self.session(f"load-{self._setup.ref}-{session}")

    async def session(self, session_id: str) -> None:
        """One session: start, context, turns of a subject's line, a recall and an agent's
        line, then its end with a proposal and a read of the profile."""
        base = "/v1/subjects/me"
        supplier = self._random.choice(SUPPLIERS)
        start = {"session_id": session_id, "channel": "whatsapp"}
        await self._call("start", "POST", f"{base}/sessions", start)
        await self._call("context", "POST", f"{base}/context", {"topic": "suppliers"})
        messages = f"{base}/sessions/{session_id}/messages"
        for turn in range(TURNS):
            if self._recorder.stop.is_set():
                return
            said = f"We work with {supplier} since turn {turn}, budget {1000 + turn} EUR."
            relayed = (
                f"/v1/subjects/{self._setup.channel.subject_id}/sessions/{session_id}/messages"
            )
            said_line = {"role": "subject", "text": said}
            await self._call("append", "POST", relayed, said_line, headers=self._channel)
            await self._call("recall", "POST", f"{base}/recall", {"query": QUERIES[turn]})
            await self._call("append", "POST", messages, {"role": "agent", "text": "Noted."})
        proposal = {
            "field": "supplier",
            "value": {"type": "text", "value": supplier},
            "origin": "stated",
            "evidence": {"session_id": session_id, "message_index": 0, "quote": supplier},
        }
        end = f"{base}/sessions/{session_id}/end"
        await self._call("end", "POST", end, {"proposals": [proposal]})
        await self._call("profile", "GET", f"{base}/profile", None)

    async def _call(
        self,
        route: str,
        method: str,
        path: str,
        body: object | None,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        await asyncio.sleep(self._setup.think_s * (0.5 + self._random.random()))
        started = time.perf_counter()
        retries = 0
        while True:
            try:
                response = await self._http.request(
                    method, path, json=body, headers=headers or self._headers
                )
            except httpx.TransportError as exc:
                elapsed = time.perf_counter() - started
                self._recorder.add(Sample(route, 0, elapsed, error=type(exc).__name__))
                return
            # As the Python client does: a 503 with Retry-After is retried after that long,
            # within the client's total; the sample is the agent's wait for its answer.
            wait = _retry_after(response)
            if wait is None or time.perf_counter() - started + wait > RETRY_TOTAL_S:
                break
            retries += 1
            await asyncio.sleep(wait)
        elapsed = time.perf_counter() - started
        degraded = None
        if route in {"recall", "context"} and response.status_code == httpx.codes.OK:
            degraded = response.json().get("degraded")
        in_app = _in_app_s(response.headers.get("server-timing"))
        sample = Sample(route, response.status_code, elapsed, degraded, in_app, retries)
        self._recorder.add(sample)


def _retry_after(response: httpx.Response) -> float | None:
    if response.status_code != httpx.codes.SERVICE_UNAVAILABLE:
        return None
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        return None


def server_timing(header: str | None) -> dict[str, float]:
    """Seconds by metric name from a `Server-Timing` header (`app;dur=12.5, use;dur=9.1`);
    entries without a readable duration are left out."""
    found: dict[str, float] = {}
    for entry in (header or "").split(","):
        name, _, params = entry.strip().partition(";")
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "dur":
                with contextlib.suppress(ValueError):
                    found[name] = float(value) / 1e3
    return found


def _in_app_s(header: str | None) -> float | None:
    return server_timing(header).get("app")


async def measure_lag(lags: list[float], stop: asyncio.Event, *, every_s: float = 0.05) -> None:
    """How late this process's event loop wakes up: when the load generator itself is
    starved of CPU, its latencies include its own lag, which this separates out."""
    while not stop.is_set():
        planned = time.perf_counter() + every_s
        await asyncio.sleep(every_s)
        lags.append(max(0.0, time.perf_counter() - planned))


TokenFor = Callable[[str], str]  # subject reference -> an agent token bound to that subject
