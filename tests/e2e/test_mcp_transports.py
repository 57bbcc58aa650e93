"""The MCP tools over real transports: `factledger mcp` as a stdio subprocess, and `/mcp` on a
`factledger serve` process; each lists the tools and tells the story. A missing or refused
token stops `factledger mcp` at start (exit 2, a message naming the variable), and `/mcp`
answers a bad bearer with the API's 401 body, whose challenge names the protected-resource
metadata, and any method but POST with a 405."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from support.api_harness import TEST_AUTH, bearer, token
from support.mcp_story import call, error, http_relay, tell_story
from support.serve_process import routes_loaded, serve_env, serving

from factledger.api.bootstrap.compose import open_ledger_runtime
from factledger.api.http.auth import Role
from factledger.api.settings import Settings
from factledger.application.ledger.commands import RegisterSubject

pytestmark = pytest.mark.slow
ENTRY = "from factledger.api.cli.main import main; main()"
REF = "crm-mcp-transport"
AGENT = token(Role.AGENT, kind="lead", ref=REF, principal_id="voice-bot")
START_LIMIT_S = 60
NODE_TEST = Path(__file__).parents[1] / "mcp_node"
NODE_LIMIT_S = 180  # installing the SDK from the lock file, then the test itself
SIGN_IN = "https://sign-in.example.test/tenants/acme"
SIGN_IN_SERVERS = {"FACTLEDGER_AUTH__AUTHORIZATION_SERVERS": json.dumps([SIGN_IN])}


def environment(data_dir: Path) -> dict[str, str]:
    return serve_env(data_dir, SIGN_IN_SERVERS)


def register_subject(data_dir: Path) -> None:
    with open_ledger_runtime(Settings(data_dir=data_dir, auth=TEST_AUTH)) as runtime:
        runtime.ledger.register_subject(RegisterSubject("t1", "lead", REF))


def start_mcp(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own entry point, fixed arguments
        [sys.executable, "-c", ENTRY, "mcp"],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=START_LIMIT_S,
        check=False,
    )


@pytest.mark.parametrize(
    ("token_value", "reason"),
    [
        (None, "FACTLEDGER_MCP_TOKEN is not set"),
        ("not-a-jwt", "FACTLEDGER_MCP_TOKEN refused: token malformed"),
        (token(Role.SERVICE), "FACTLEDGER_MCP_TOKEN refused: an agent token, bound to a subject"),
    ],
)
def test_mcp_refuses_to_start_without_a_valid_agent_token(
    tmp_path: Path, token_value: str | None, reason: str
) -> None:
    env = environment(tmp_path)
    env.pop("FACTLEDGER_MCP_TOKEN", None)
    if token_value is not None:
        env["FACTLEDGER_MCP_TOKEN"] = token_value
    done = start_mcp(env)
    assert done.returncode == 2
    assert reason in done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


async def test_the_story_over_stdio(tmp_path: Path) -> None:
    register_subject(tmp_path)
    env = environment(tmp_path) | {"FACTLEDGER_MCP_TOKEN": AGENT}
    server = StdioServerParameters(command=sys.executable, args=["-c", ENTRY, "mcp"], env=env)
    with (tmp_path / "mcp.log").open("w") as errlog:
        transport = stdio_client(server, errlog=errlog)
        async with Client(transport, read_timeout_seconds=START_LIMIT_S) as client:
            await tell_story(client)
    assert "Traceback" not in (tmp_path / "mcp.log").read_text()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir = tmp_path_factory.mktemp("serve-mcp")
    with serving(data_dir, SIGN_IN_SERVERS) as base_url:
        routes_loaded(base_url)
        body = {"kind": "lead", "external_ref": REF}
        created = httpx.post(
            f"{base_url}/v1/subjects", json=body, headers=bearer(token(Role.SERVICE))
        )
        assert created.status_code == 201, created.text
        yield base_url


def http_client(base_url: str, jwt: str) -> Client:
    session = httpx2.AsyncClient(headers=bearer(jwt), timeout=30)
    return Client(streamable_http_client(f"{base_url}/mcp", http_client=session))


async def test_the_story_over_streamable_http(served: str) -> None:
    query = {"kind": "lead", "external_ref": REF}
    async with (
        http_client(served, AGENT) as client,
        httpx.AsyncClient(base_url=served, timeout=30) as channel,
    ):
        # The id is keyed under the server's own key: the API names it.
        found = await channel.get(
            "/v1/subjects/lookup", params=query, headers=bearer(token(Role.SERVICE))
        )
        subject_id = str(found.json()["subject_id"])
        await tell_story(client, http_relay(channel, subject_id, bearer(token(Role.SERVICE))))


async def test_over_http_an_argument_naming_a_subject_fails(served: str) -> None:
    async with http_client(served, AGENT) as client:
        result = await call(client, "recall", query="vans", subject="crm-someone-else")
        refused = error(result)
    assert (refused["error"], refused["field"]) == ("ValidationError", "subject")


async def test_over_http_a_service_token_may_not_use_the_tools(served: str) -> None:
    async with http_client(served, token(Role.SERVICE)) as client:
        refused = error(await call(client, "recall", query="vans"))
    assert refused["error"] == "PermissionDeniedError"


def test_mcp_over_http_refuses_a_missing_or_bad_bearer_with_the_apis_body(served: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, bearer("not-a-jwt")):
        response = httpx.post(f"{served}/mcp", json=ping, headers=headers)
        assert response.status_code == 401
        assert response.json()["error"] == "AuthenticationError"


def test_mcp_over_http_answers_405_to_a_stream_get_and_to_delete(served: str) -> None:
    stream = {**bearer(AGENT), "Accept": "text/event-stream"}
    for method in ("GET", "DELETE"):
        # A stateless server has no stream to hold open: the answer comes at once.
        response = httpx.request(method, f"{served}/mcp", headers=stream, timeout=10)
        assert response.status_code == 405, method
        assert response.headers["Allow"] == "POST"
        assert response.json()["error"] == "MethodNotAllowed"


def test_a_401_from_mcp_names_the_metadata_which_names_where_to_sign_in(served: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    missing = httpx.post(f"{served}/mcp", json=ping)
    refused = httpx.post(f"{served}/mcp", json=ping, headers=bearer("not-a-jwt"))
    where = f'resource_metadata="{served}/.well-known/oauth-protected-resource/mcp"'
    assert missing.headers["WWW-Authenticate"] == f"Bearer {where}"
    assert refused.headers["WWW-Authenticate"] == f'Bearer error="invalid_token", {where}'

    metadata = httpx.get(f"{served}/.well-known/oauth-protected-resource/mcp")
    assert metadata.status_code == 200
    assert metadata.json() == {
        "resource": f"{served}/mcp",
        "authorization_servers": [SIGN_IN],
        "bearer_methods_supported": ["header"],
        "resource_name": "factledger",
    }
    # The root form, which hosts try when the path-suffixed one is missing, covers `/mcp`.
    whole = httpx.get(f"{served}/.well-known/oauth-protected-resource").json()
    assert (whole["resource"], whole["authorization_servers"]) == (served, [SIGN_IN])


def node_sdk_installed() -> None:
    """The Node SDK from the lock file (`make test` installs it first; this covers a bare
    pytest run), or a skip naming what is missing, as the browser tests do."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are needed for the Node SDK test")
    if (NODE_TEST / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        return
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"],  # noqa: S607
        cwd=NODE_TEST,
        check=True,
        capture_output=True,
        timeout=NODE_LIMIT_S,
    )


def test_the_official_node_sdk_signs_in_lists_and_calls(served: str) -> None:
    node_sdk_installed()
    env = {
        **os.environ,
        "FACTLEDGER_URL": served,
        "FACTLEDGER_AGENT_TOKEN": AGENT,
        "FACTLEDGER_SIGN_IN": SIGN_IN,
        "FACTLEDGER_VERSION": version("factledger"),
    }
    done = subprocess.run(
        ["node", "--test", "host.test.mjs"],  # noqa: S607
        cwd=NODE_TEST,
        env=env,
        capture_output=True,
        text=True,
        timeout=NODE_LIMIT_S,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout
