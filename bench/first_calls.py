"""`python -m factledger.bench.first_calls [--runs N] [--baseline-python PATH]`: what the first
calls after a cold start of `factledger serve` cost (embedded default), this install and
another side by side, in turns: from launch to ready, then, on one start, a subject's first
message (the channel relays it; the models that screen it load after ready) and the next
one; on another start, a first MCP `initialize` (the SDK loads after ready). Prints one row
per start; the medians close the table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from factledger.bench.cli.load import _credentials
from factledger.bench.load.run import Credentials
from factledger.bench.serve_start import READY_TIMEOUT_S, _wait_until_ready, free_port, stop

SERVE = "from factledger.api.cli.main import main; main()"
REF = "first-calls"
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "first-calls", "version": "1"},
    },
}


def first_message(http: httpx.Client, credentials: Credentials) -> tuple[float, float]:
    """Seconds of a subject's first message, then of the next one."""
    service = {"Authorization": f"Bearer {credentials.service_token}"}
    agent = {"Authorization": f"Bearer {credentials.agent_token(REF)}"}
    subject = {"kind": "lead", "external_ref": REF}
    created = http.post("/v1/subjects", json=subject, headers=service).raise_for_status()
    start = {"session_id": "s1", "channel": "whatsapp"}
    http.post("/v1/subjects/me/sessions", json=start, headers=agent).raise_for_status()
    relayed = f"/v1/subjects/{created.json()['subject_id']}/sessions/s1/messages"
    seconds = []
    for text in ("We work with Supplier Basalt since May.", "Our budget is 4,000 EUR."):
        sent = time.perf_counter()
        line = {"role": "subject", "text": text}
        http.post(relayed, json=line, headers=service).raise_for_status()
        seconds.append(time.perf_counter() - sent)
    return seconds[0], seconds[1]


def first_mcp_call(http: httpx.Client, credentials: Credentials) -> tuple[float, float]:
    """Seconds of a first MCP `initialize`, then of the next one."""
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {credentials.agent_token(REF)}"}
    seconds = []
    for _ in range(2):
        sent = time.perf_counter()
        http.post("/mcp", json=INITIALIZE, headers=headers).raise_for_status()
        seconds.append(time.perf_counter() - sent)
    return seconds[0], seconds[1]


CALLS: dict[str, Callable[[httpx.Client, Credentials], tuple[float, float]]] = {
    "first message": first_message,
    "first MCP initialize": first_mcp_call,
}


def one_start(python: Path, call: str, credentials: Credentials) -> tuple[float, float, float]:
    """Seconds to ready, of the first call and of the next one, on a fresh data folder."""
    with tempfile.TemporaryDirectory(prefix="factledger-first-calls-") as data:
        env = {**os.environ, **credentials.server_env, "FACTLEDGER_DATA_DIR": data}
        port = free_port()
        launched = time.perf_counter()
        process = subprocess.Popen(  # noqa: S603 - an interpreter the operator chose, no shell
            [str(python), "-c", SERVE, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            ready = _wait_until_ready(port, process, launched, None).seconds
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=READY_TIMEOUT_S) as http:
                first, after = CALLS[call](http, credentials)
            return ready, first, after
        finally:
            stop(process)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.first_calls")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-python", type=Path, default=None)
    args = parser.parse_args(argv)
    contenders = {"this": Path(sys.executable)}
    if args.baseline_python is not None:
        contenders["baseline"] = args.baseline_python
    credentials = _credentials()
    out = sys.stdout
    out.write("| call | build | ready s | first call s | next call ms |\n")
    out.write("| --- | --- | --- | --- | --- |\n")
    for call in CALLS:
        firsts: dict[str, list[float]] = {label: [] for label in contenders}
        for _ in range(args.runs):
            for label, python in contenders.items():
                ready, first, after = one_start(python, call, credentials)
                firsts[label].append(first)
                out.write(
                    f"| {call} | {label} | {ready:.2f} | {first:.2f} | {after * 1000:.0f} |\n"
                )
                out.flush()
        for label, seconds in firsts.items():
            out.write(f"| {call} | {label}, median | | **{statistics.median(seconds):.2f}** | |\n")


if __name__ == "__main__":
    main()
