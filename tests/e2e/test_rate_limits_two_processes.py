"""Two `factledger serve` processes on one data directory (the embedded default) hold one
principal's configured rate in total: the count lives in a store they share, not in each.

Bounded in time and count: each process is hammered for `HAMMER_S` seconds (at most
`MAX_REQUESTS` requests in all), far faster than the rate. The bounds are generous: per-process
counting would admit about twice the allowance, which the upper bound refuses.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from support.api_harness import bearer, token
from support.serve_process import serving

from factledger.api.http.auth import Role
from factledger.api.http.rate_limit import LOCAL_FOR_S

pytestmark = [pytest.mark.slow, pytest.mark.serial]

PER_S, BURST = 20, 20
HAMMER_S = 3.0
MAX_REQUESTS = 6000
CLIENTS_PER_PROCESS = 3
LIMITS = {
    "FACTLEDGER_API__RATE_LIMIT__ROLES": json.dumps({"service": {"per_s": PER_S, "burst": BURST}}),
    "FACTLEDGER_EMBEDDER__KIND": "hashing",
}


@contextmanager
def two_processes(data_dir: Path, extra: Mapping[str, str]) -> Iterator[list[str]]:
    with ExitStack() as stack:
        base_urls = [stack.enter_context(serving(data_dir, extra, name=f"api-{n}")) for n in "ab"]
        # A process answers `/readyz` before its routes are in (ADR 0095): the window opens
        # once both serve them, or the one still loading them answers a handful of requests.
        for base_url in base_urls:
            httpx.get(f"{base_url}/openapi.json", timeout=60).raise_for_status()
        yield base_urls


def hammer(base_urls: list[str]) -> tuple[Counter[tuple[str, int]], float, list[str]]:
    """Every process gets `CLIENTS_PER_PROCESS` clients asking `/v1/whoami` as one service
    principal until the window closes; returns the statuses by process, the window's length,
    and the `Retry-After` headers of the 429s."""
    headers = bearer(token(Role.SERVICE, principal_id="platform"))
    statuses: Counter[tuple[str, int]] = Counter()
    retry_after: list[str] = []
    lock = threading.Lock()
    sent = 0
    started = time.monotonic()
    deadline = started + HAMMER_S

    def client(base_url: str) -> None:
        nonlocal sent
        with httpx.Client(base_url=base_url, timeout=10) as http:
            while time.monotonic() < deadline:
                with lock:
                    if sent >= MAX_REQUESTS:
                        return
                    sent += 1
                response = http.get("/v1/whoami", headers=headers)
                with lock:
                    statuses[base_url, response.status_code] += 1
                    if response.status_code == 429:
                        retry_after.append(response.headers.get("Retry-After", ""))

    threads = [
        threading.Thread(target=client, args=(url,))
        for url in base_urls
        for _ in range(CLIENTS_PER_PROCESS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=HAMMER_S + 30)
    return statuses, time.monotonic() - started, retry_after


def local_periods(data_dir: Path) -> int:
    """How many times a process counted on its own because the shared store did not answer in
    time (`api.rate_limits_local`, logged as each such period of `LOCAL_FOR_S` begins): by
    design, a slow store costs the limit's precision, never a request's latency."""
    return sum(
        log.read_text(encoding="utf-8", errors="replace").count("api.rate_limits_local")
        for log in data_dir.glob("api-*.log")
    )


def assert_rate_held_in_total(base_urls: list[str], data_dir: Path) -> None:
    statuses, window_s, retry_after = hammer(base_urls)
    admitted = sum(n for (_, status), n in statuses.items() if status == 200)
    limited = sum(n for (_, status), n in statuses.items() if status == 429)
    assert admitted + limited == sum(statuses.values()), statuses  # nothing else answered
    allowance = BURST + PER_S * window_s
    # Every process was hammered past the limit. Which of them admits the allowance is not
    # promised: the shared bucket's tokens go to whichever asks first once they refill, so a
    # process answering faster may take them all (one CI run: 73 admitted by one, none by the
    # other, which answered a third as many requests).
    for url in base_urls:
        assert statuses[url, 429] > 0, statuses
    assert admitted >= BURST, statuses
    # Per-process counting admits about 2 x allowance; a shared count stays near 1 x, plus
    # what a process admits alone while the store is slow to answer (its own full bucket and
    # what it refills in one local period), as a loaded machine sometimes makes it.
    alone = local_periods(data_dir) * (BURST + PER_S * LOCAL_FOR_S)
    assert admitted <= allowance * 1.3 + 5 + alone, (admitted, allowance, alone, statuses)
    assert retry_after
    assert all(int(value) >= 1 for value in retry_after)


def test_two_processes_on_one_data_directory_hold_the_rate_in_total(tmp_path: Path) -> None:
    with two_processes(tmp_path / "data", LIMITS) as base_urls:
        assert_rate_held_in_total(base_urls, tmp_path / "data")
