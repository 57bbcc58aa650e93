"""The README's integration examples in Python (LangChain's and LlamaIndex's), run as written
against a live `factledger serve` (the TypeScript one runs in test_typescript_client.py). Only
the server's address differs from the README's, and the tokens are the test key's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.api_harness import token
from support.serve_process import serving

from factledger.api.http.auth import Role
from factledger.client import FactledgerClient

from .test_typescript_client import README_URL, readme_examples

pytestmark = pytest.mark.slow
RUN_LIMIT_S = 120
SEARCHABLE_WITHIN_S = 60.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(tmp_path_factory.mktemp("serve-readme")) as base_url:
        # The first requests after ready wait for the routes' and the model's loads.
        service = FactledgerClient(base_url, token(Role.SERVICE, tenant="acme"), timeout_s=60)
        lead = service.register_subject("lead", "crm-17").subject_id
        agent_token = token(Role.AGENT, tenant="acme", kind="lead", ref="crm-17")
        with service, FactledgerClient(base_url, agent_token, timeout_s=60) as agent:
            # What the README's TypeScript example records first, searchable once synced; the
            # subject's words come from the channel (the service token).
            agent.start_session("chat-42", "chat")
            said = "We moved to Supplier B in March."
            service.append_message("chat-42", "subject", said, subject=lead)
            agent.end_session("chat-42")
            deadline = time.monotonic() + SEARCHABLE_WITHIN_S
            while not agent.recall("which supplier do they use?").notes:
                assert time.monotonic() < deadline, "the session never became searchable"
                time.sleep(0.2)
        yield base_url


@pytest.fixture(scope="module")
def env(server: str) -> dict[str, str]:
    return {
        **os.environ,
        "SERVICE_TOKEN": token(Role.SERVICE, tenant="acme"),
        "AGENT_TOKEN": token(Role.AGENT, tenant="acme", kind="lead", ref="crm-17"),
    }


def run_example(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(  # noqa: S603 - the README's own examples, our tools
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_LIMIT_S, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout


def test_the_python_examples(server: str, env: dict[str, str], tmp_path: Path) -> None:
    # One interpreter runs them all, each in namespaces of its own: a start is seconds here.
    scripts = []
    for n, example in enumerate(readme_examples("python")):
        script = tmp_path / f"example_{n}.py"
        script.write_text(example.replace(README_URL, server))
        scripts.append(str(script))
    runner = "import runpy, sys\nfor path in sys.argv[1:]:\n    runpy.run_path(path)\n"
    out = run_example([sys.executable, "-c", runner, *scripts], tmp_path, env)
    assert len(scripts) == 3
    expected_lines = (
        "Our budget holder is the CFO.",
        "We pay in euros.",
        "Relevant notes",
        "<memory>",
    )
    for expected in expected_lines:
        assert expected in out
