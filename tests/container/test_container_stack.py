"""The repository's Dockerfile and compose.yaml, built and run with podman: the database
(PostgreSQL + pgvector), the API with its console, and the sync worker answer as one stack.

No registry is reachable here, so the image is built from a base made of Debian's packages
(`support.container_stack`); everything else is what a user runs. The stack is torn down
after the module, also when a test or the start fails.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import httpx
import pytest
from support.console_seed import csrf_of
from support.container_stack import (
    Podman,
    Stack,
    base_image,
    build_image,
    cache_dir,
    compose_stack,
    missing_tools,
    wheelhouse,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

# A first start migrates every store and compiles the embedder's graph on a loaded machine.
READY_WITHIN_S = 300.0
HEALTH_CHECKS = 3  # of compose.yaml's 6 retries
# The worker, a process of its own, syncs the session to pgvector; recall then finds it.
SYNCED_WITHIN_S = 180.0
# Every store's pool replaces the connections a restarted database dropped (ADR 0013).
HEALED_WITHIN_S = 120.0
TENANT = "acme"
SUBJECT_REF = "crm-container"
SAID = "We moved to Supplier Basalt last month because of delivery delays."


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    missing = missing_tools()
    if missing:
        pytest.fail(f"missing {', '.join(missing)}: apt-get install {' '.join(missing)}")
    podman = Podman.configured(cache_dir())
    tag = f"localhost/factledger:test-{uuid4().hex[:8]}"
    build_image(podman, tag, base_image(podman), wheelhouse(podman.root))
    try:
        with compose_stack(podman, tag, f"fltest{uuid4().hex[:8]}") as running:
            wait_until_ready(running)
            yield running
    finally:
        podman("rmi", tag, check=False)


def wait_until_ready(stack: Stack) -> None:
    deadline = time.monotonic() + READY_WITHIN_S
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            answer = httpx.get(f"{stack.base_url}/readyz", timeout=5)
            if answer.status_code == 200:
                return
            last = f"{answer.status_code} {answer.text}"
        except httpx.HTTPError as exc:
            last = type(exc).__name__
        time.sleep(2)
    pytest.fail(f"/readyz not ready within {READY_WITHIN_S:.0f} s ({last})\n{stack.logs()}")


def mint(stack: Stack, role: str, *extra: str) -> dict[str, str]:
    """A token from the image's own CLI, signed with the stack's (dev) keys."""
    jwt = stack.exec(
        "api", "factledger", "token", "mint", "--role", role, "--tenant", TENANT, *extra
    )
    return {"Authorization": f"Bearer {jwt.strip()}"}


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_readyz_answers_for_every_store_and_the_pgvector_memory(stack: Stack) -> None:
    ready = ok(httpx.get(f"{stack.base_url}/readyz", timeout=10))
    assert ready["status"] == "ready"
    stores = {"ledger", "views", "keys", "short_term", "sync_store", "memory"}
    assert ready["checks"] == dict.fromkeys(stores, "ok")


def test_each_service_passes_its_health_check(stack: Stack) -> None:
    containers = stack.containers()
    assert set(containers) == {"db", "api", "worker"}
    for service, name in containers.items():
        # Compose calls a service unhealthy after `retries` failed checks in a row, not one:
        # a single check whose 5 s probe lands on a busy moment of a loaded machine is not.
        for _ in range(HEALTH_CHECKS):
            checked = stack.podman("healthcheck", "run", name, check=False, timeout=60)
            if checked.returncode == 0:
                break
            time.sleep(5)
        assert checked.returncode == 0, f"{service}: {checked.stdout}{checked.stderr}"


def test_a_session_recorded_over_http_is_recalled_after_the_worker_syncs_it(
    stack: Stack,
) -> None:
    service = mint(stack, "service")
    agent = mint(stack, "agent", "--subject", f"lead:{SUBJECT_REF}")
    with httpx.Client(base_url=stack.base_url, timeout=30) as http:
        body = {"kind": "lead", "external_ref": SUBJECT_REF}
        ok(http.post("/v1/subjects", json=body, headers=service), 201)
        start = {"session_id": "wa-container", "channel": "whatsapp"}
        ok(http.post("/v1/subjects/me/sessions", json=start, headers=agent), 201)
        message = {"role": "subject", "text": SAID}
        url = "/v1/subjects/me/sessions/wa-container"
        # The subject's words come from the channel that heard them: the service's token.
        lead = http.get(
            "/v1/subjects/lookup",
            params={"kind": "lead", "external_ref": SUBJECT_REF},
            headers=service,
        ).json()["subject_id"]
        relayed = f"/v1/subjects/{lead}/sessions/wa-container/messages"
        ok(http.post(relayed, json=message, headers=service))
        ok(http.post(f"{url}/end", json={}, headers=agent))

        query = {"query": "Which supplier do they use now?"}
        deadline = time.monotonic() + SYNCED_WITHIN_S
        notes: list[str] = []
        while time.monotonic() < deadline:
            answer = ok(http.post("/v1/subjects/me/recall", json=query, headers=agent))
            notes = [note["text"] for note in answer["notes"]]
            if any("Basalt" in note for note in notes):
                break
            time.sleep(2)
        assert any("Basalt" in note for note in notes), f"recall: {notes}\n{stack.logs()}"


def test_the_console_link_signs_a_reviewer_in_and_shows_the_queue(stack: Stack) -> None:
    # As the README says: `compose exec api factledger console-link --tenant acme`.
    link = stack.exec("api", "factledger", "console-link", "--tenant", TENANT).strip()
    page, _, fragment = link.rpartition("#token=")
    assert page == f"{stack.base_url}/console/sign-in", link
    with httpx.Client(base_url=stack.base_url, timeout=30) as web:
        form = web.get("/console/sign-in")
        assert form.status_code == 200
        signed_in = web.post(
            "/console/sign-in", data={"token": fragment, "csrf": csrf_of(form.text)}
        )
        assert signed_in.status_code == 303
        assert signed_in.headers["location"] == "/console/queue"
        queue = web.get("/console/queue")
        assert queue.status_code == 200
        assert "text/html" in queue.headers["content-type"]


def test_the_stack_heals_after_the_database_restarts(stack: Stack) -> None:
    service = mint(stack, "service")
    stack.podman("restart", stack.containers()["db"], timeout=120)
    deadline = time.monotonic() + HEALED_WITHIN_S
    statuses: list[int] = []
    with httpx.Client(base_url=stack.base_url, timeout=30) as http:
        while time.monotonic() < deadline:
            body = {"kind": "lead", "external_ref": "crm-after-restart"}
            answer = http.post("/v1/subjects", json=body, headers=service)
            statuses.append(answer.status_code)
            if answer.status_code in (200, 201):
                break
            # While the pools reconnect, a request fails fast and says to retry; never a 500.
            assert answer.status_code == 503, answer.text
            time.sleep(1)
        assert statuses[-1] in (200, 201), f"{statuses}\n{stack.logs()}"
        # Each store has a pool of its own, and each heals on its next use or its own retry.
        ready = http.get("/readyz")
        while ready.status_code != 200 and time.monotonic() < deadline:
            assert ready.status_code == 503, ready.text
            time.sleep(1)
            ready = http.get("/readyz")
        assert ready.status_code == 200, f"{ready.text}\n{stack.logs()}"
