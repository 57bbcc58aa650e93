"""The TypeScript client (clients/typescript): its generated types match the API's current
OpenAPI document, and its tests (node's test runner) pass against a live `factledger serve`.

Node and the client's packages (`npm ci`, which `make test` runs) must be there: without them
these tests fail, naming what is missing, rather than skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support.api_harness import token
from support.serve_process import routes_loaded, serving

from factledger.api.http.auth import Role
from factledger.client import FactledgerClient

pytestmark = pytest.mark.slow
REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGE = REPOSITORY / "clients" / "typescript"
README = REPOSITORY / "README.md"
README_URL = "http://localhost:8000"
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
        pytest.fail(f"{path} is missing: run `npm ci` in clients/typescript (`make node-deps`)")
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
        routes_loaded(base_url)
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


@pytest.fixture(scope="module")
def built() -> Path:
    """The client and its tests compiled afresh (a test whose source is gone must not run)."""
    tool("node")
    shutil.rmtree(PACKAGE / "dist", ignore_errors=True)
    done = run([str(installed("tsc")), "-p", "tsconfig.json"])
    assert done.returncode == 0, done.stdout + done.stderr
    return PACKAGE / "dist"


def test_the_client_passes_its_tests_against_a_live_server(server: str, built: Path) -> None:
    node = tool("node")
    env = {
        **os.environ,
        "FACTLEDGER_URL": server,
        "FACTLEDGER_SUBJECT_REF": REF,
        "FACTLEDGER_SERVICE_TOKEN": token(Role.SERVICE),
        "FACTLEDGER_REVIEWER_TOKEN": token(Role.REVIEWER),
        "FACTLEDGER_AGENT_TOKEN": token(Role.AGENT, kind="lead", ref=REF, principal_id="ts-bot"),
    }
    tests = sorted(str(path) for path in (built / "test").glob("*.test.js"))
    assert len(tests) >= 3, tests
    done = run([node, "--test", *tests], env=env)
    assert done.returncode == 0, done.stdout[-8000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout


def test_the_readme_example_runs_as_written(server: str, built: Path, tmp_path: Path) -> None:
    """The README's TypeScript example, compiled in a project of its own that depends on the
    client as `npm install <folder>` links it; only the server's address differs."""
    [example] = readme_examples("ts")
    node = tool("node")
    (tmp_path / "package.json").write_text('{"name": "my-agent", "type": "module"}')
    (tmp_path / "node_modules" / "@factledger").mkdir(parents=True)
    (tmp_path / "node_modules" / "@factledger" / "client").symlink_to(PACKAGE)
    (tmp_path / "tsconfig.json").write_text(
        '{"compilerOptions": {"target": "ES2022", "module": "NodeNext", "strict": true, '
        '"skipLibCheck": true, "types": ["node"], '
        f'"typeRoots": ["{PACKAGE / "node_modules" / "@types"}"]}}}}'
    )
    (tmp_path / "example.ts").write_text(example.replace(README_URL, server))
    env = {
        **os.environ,
        "SERVICE_TOKEN": token(Role.SERVICE, tenant="acme"),
        "AGENT_TOKEN": token(Role.AGENT, tenant="acme", kind="lead", ref="crm-17"),
    }
    with FactledgerClient(server, env["SERVICE_TOKEN"]) as service:
        service.register_subject("lead", "crm-17")
    compiled = run([str(installed("tsc")), "-p", str(tmp_path / "tsconfig.json")])
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    done = subprocess.run(  # noqa: S603 - node on the README's example
        [node, "example.js"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=NODE_LIMIT_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "refused: query" in done.stdout
    assert " session_recorded " in done.stdout


def readme_examples(language: str) -> list[str]:
    """The README's integration examples in this language, in order."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Integrations") :]
    section = section[: section.index("\n## ", 1)]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)
