"""The TypeScript client (clients/typescript): its generated types match the API's current
OpenAPI document, and its tests (node's test runner) pass against a live `factledger serve`.

Node and the client's packages (`npm ci`, which `make test` runs) must be there: without them
these tests fail, naming what is missing, rather than skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.api_harness import token
from support.live_server import serving

from factledger.api.http.auth import Role

pytestmark = pytest.mark.slow
PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"
REF = "crm-ts-1"
NODE_LIMIT_S = 240


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: the TypeScript client's tests need Node.js and npm")
    return path


def installed(binary: str) -> Path:
    path = PACKAGE / "node_modules" / ".bin" / binary
    if not path.exists():
        pytest.fail(f"{path} is missing: run `npm ci` in clients/typescript (`make node`)")
    return path


def run(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - the package's own tools, fixed arguments
        command,
        cwd=PACKAGE,
        env=env,
        capture_output=True,
        text=True,
        timeout=NODE_LIMIT_S,
        check=False,
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(tmp_path_factory.mktemp("serve-ts")) as base_url:
        yield base_url


def test_the_checked_in_openapi_document_is_the_served_one(server: str) -> None:
    served = httpx.get(f"{server}/openapi.json", timeout=10).json()
    checked_in = json.loads((PACKAGE / "openapi.json").read_text(encoding="utf-8"))
    assert checked_in == served, "clients/typescript/openapi.json is stale: run `make openapi`"


def test_the_generated_types_are_current(tmp_path: Path) -> None:
    tool("node")
    fresh = tmp_path / "api.ts"
    done = run(
        [
            str(installed("openapi-typescript")),
            "openapi.json",
            "--default-non-nullable",
            "false",
            "--output",
            str(fresh),
        ]
    )
    assert done.returncode == 0, done.stderr
    generate = json.loads((PACKAGE / "package.json").read_text())["scripts"]["generate"]
    assert "--default-non-nullable false" in generate  # the options above are the script's
    checked_in = (PACKAGE / "src" / "generated" / "api.ts").read_text(encoding="utf-8")
    assert fresh.read_text(encoding="utf-8") == checked_in, (
        "clients/typescript/src/generated/api.ts is stale: run `make openapi`"
    )


def test_the_client_passes_its_tests_against_a_live_server(server: str) -> None:
    node = tool("node")
    # A fresh build: a compiled test whose source is gone must not run.
    shutil.rmtree(PACKAGE / "dist", ignore_errors=True)
    built = run([str(installed("tsc")), "-p", "tsconfig.json"])
    assert built.returncode == 0, built.stdout + built.stderr
    env = {
        **os.environ,
        "FACTLEDGER_URL": server,
        "FACTLEDGER_SUBJECT_REF": REF,
        "FACTLEDGER_SERVICE_TOKEN": token(Role.SERVICE),
        "FACTLEDGER_REVIEWER_TOKEN": token(Role.REVIEWER),
        "FACTLEDGER_AGENT_TOKEN": token(Role.AGENT, kind="lead", ref=REF, principal_id="ts-bot"),
    }
    tests = sorted(str(path) for path in (PACKAGE / "dist" / "test").glob("*.test.js"))
    assert len(tests) >= 3, tests
    done = run([node, "--test", *tests], env=env)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
