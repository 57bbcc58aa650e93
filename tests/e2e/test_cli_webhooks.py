"""`factledger webhooks run --once` delivers the tenant's events to a real HTTP receiver,
signed with the endpoint's secret; `factledger webhooks log` shows where it stands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.api_harness import TEST_AUTH

from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.settings import Settings
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.webhooks.signing import verify

ENTRY = "from factledger.api.cli.main import main; main()"
SECRET = "a-shared-secret-of-at-least-32-bytes!"


class Receiver(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, Any], bool]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        signed = verify(SECRET.encode(), dict(self.headers.items()), body)
        self.received.append((json.loads(body), signed))
        self.send_response(204 if signed else 401)
        self.end_headers()

    def log_message(self, *_: Any) -> None:  # no access lines on the test's stderr
        return


@pytest.fixture
def receiver() -> Iterator[str]:
    Receiver.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [sys.executable, "-c", ENTRY, "webhooks", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_run_once_delivers_signed_events_and_the_log_shows_the_position(
    tmp_path: Path, receiver: str
) -> None:
    with open_ledger_runtime(Settings(data_dir=tmp_path, auth=TEST_AUTH)) as runtime:
        for ref in ("crm-1", "crm-2"):
            runtime.ledger.register_subject(RegisterSubject("acme", "lead", ref))
        runtime.ledger.register_subject(RegisterSubject("other", "lead", "crm-9"))
    endpoint = {"id": "crm", "tenant": "acme", "url": receiver, "secret": SECRET}
    env = {
        **os.environ,
        "FACTLEDGER_DATA_DIR": str(tmp_path),
        "FACTLEDGER_WEBHOOKS__ENDPOINTS": json.dumps([endpoint]),
        # The receiver listens on loopback: the operator says so.
        "FACTLEDGER_WEBHOOKS__ALLOW_INTERNAL_ADDRESSES": "true",
    }
    ran = cli(env, "run", "--once")
    assert ran.returncode == 0, ran.stderr
    # Each delivery's id is the endpoint and the event's opaque cursor.
    delivered = [(body["id"].split(":", 1)[0], signed) for body, signed in Receiver.received]
    assert delivered == [("crm", True), ("crm", True)]
    assert len({body["id"] for body, _ in Receiver.received}) == 2
    shown = cli(env, "log", "crm")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == "position 2"
    assert shown.stdout.count("delivered") == 2
    assert SECRET not in ran.stderr + ran.stdout


def test_run_refuses_to_start_without_endpoints(tmp_path: Path) -> None:
    env = {**os.environ, "FACTLEDGER_DATA_DIR": str(tmp_path)}
    env.pop("FACTLEDGER_WEBHOOKS__ENDPOINTS", None)
    ran = cli(env, "run", "--once")
    assert ran.returncode == 2
    assert "FACTLEDGER_WEBHOOKS__ENDPOINTS" in ran.stderr


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://10.0.0.5/hook",
        "http://[::ffff:192.168.1.1]/hook",
    ],
)
def test_run_refuses_an_internal_endpoint_naming_the_field(tmp_path: Path, url: str) -> None:
    endpoint = {"id": "crm", "tenant": "acme", "url": url, "secret": SECRET}
    env = {
        **os.environ,
        "FACTLEDGER_DATA_DIR": str(tmp_path),
        "FACTLEDGER_WEBHOOKS__ENDPOINTS": json.dumps([endpoint]),
    }
    env.pop("FACTLEDGER_WEBHOOKS__ALLOW_INTERNAL_ADDRESSES", None)
    env["COLUMNS"] = "400"  # the error box on one line
    ran = cli(env, "run", "--once")
    assert ran.returncode == 2, ran.stderr
    assert "webhooks.endpoints[0].url" in ran.stderr
    assert "FACTLEDGER_WEBHOOKS__ALLOW_INTERNAL_ADDRESSES" in ran.stderr
    assert url.split("//")[1].split("/")[0] not in ran.stderr  # the value is never echoed
