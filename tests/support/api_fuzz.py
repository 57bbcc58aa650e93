"""What the schema fuzzing of the API shares between its runs (in process on the embedded
default, and against `factledger serve` on PostgreSQL + pgvector): the callers, the checks, the
scene the cases aim at, and the analyst's read of every event page afterwards."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import httpx
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from support.api_harness import bearer, line, token

from factledger.api.http.auth import Role

FUZZ_REF = "fuzz-1"
CALLERS = {
    "agent": bearer(token(Role.AGENT, kind="lead", ref=FUZZ_REF)),
    "service": bearer(token(Role.SERVICE)),
}
ANALYST = bearer(token(Role.ANALYST))
ENDED, OPEN = "fuzz-ended", "fuzz-open"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# The largest page the events endpoint serves.
EVENT_PAGE = 500


SCENE_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class Scene:
    """What exists on the server before fuzzing, for cases to aim at."""

    url: str
    subject_id: str  # the agent token's subject
    change_id: str  # a pending proposal of that subject
    sessions: tuple[str, str] = (ENDED, OPEN)


def set_the_scene(url: str) -> Scene:
    # A minute per request: the first message waits for the models the server loads after
    # ready, on two cores the fuzzing's other process shares; only a hang should fail here.
    with httpx.Client(timeout=SCENE_TIMEOUT_S) as http:
        return _scene(http, url)


def _scene(http: httpx.Client, url: str) -> Scene:
    service, agent = CALLERS["service"], CALLERS["agent"]
    me = f"{url}/v1/subjects/me"
    subject = {"kind": "lead", "external_ref": FUZZ_REF}
    created = http.post(f"{url}/v1/subjects", json=subject, headers=service).raise_for_status()
    for session in (ENDED, OPEN):
        start = {"session_id": session, "channel": "whatsapp"}
        http.post(f"{me}/sessions", json=start, headers=agent).raise_for_status()
        message = {"role": "subject", "text": "We work with Supplier A."}
        url_messages = f"{me}/sessions/{session}/messages"
        http.post(**line(url_messages, message, agent)).raise_for_status()
    http.post(f"{me}/sessions/{ENDED}/end", json={}, headers=agent).raise_for_status()
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier A"},
        "origin": "stated",
        "evidence": {"session_id": ENDED, "message_index": 0, "quote": "Supplier A"},
    }
    change = http.post(f"{me}/proposals", json=proposal, headers=agent).raise_for_status()
    return Scene(url, str(created.json()["subject_id"]), str(change.json()["change_id"]))


# Every other case addresses what exists (random ids only ever reach a 404).
_TURN = itertools.count()


def aim(case: Any, caller: str, scene: Scene) -> None:
    parameters = case.path_parameters or {}
    turn = next(_TURN)
    if turn % 2:
        return
    if "subject" in parameters:
        parameters["subject"] = "me" if caller == "agent" else scene.subject_id
    if "session_id" in parameters:
        parameters["session_id"] = scene.sessions[turn // 2 % 2]
    if "change_id" in parameters:
        parameters["change_id"] = scene.change_id


def check_case(case: Any, caller: str, scene: Scene) -> None:
    """Sends the case at the scene as `caller`: no 5xx, the schema kept, one error shape."""
    aim(case, caller, scene)
    response = case.call(base_url=scene.url, headers=CALLERS[caller])
    case.validate_response(response, checks=CHECKS, headers=CALLERS[caller])
    if response.status_code >= 400:
        body = response.json()
        assert {"error", "detail"} <= set(body) <= {"error", "detail", "field"}, body


def read_every_event_page(url: str, subject_id: str) -> int:
    """An analyst reads the subject's whole history in the largest pages; every page is a 200.
    Returns how many events there were."""
    after, seen = 0, 0
    while True:
        response = httpx.get(
            f"{url}/v1/subjects/{subject_id}/events",
            params={"after": after, "limit": EVENT_PAGE},
            headers=ANALYST,
            timeout=60,
        )
        assert response.status_code == 200, (response.status_code, response.text[:300])
        page = response.json()
        seen += len(page["events"])
        if page["next_after"] is None:
            return seen
        after = page["next_after"]
