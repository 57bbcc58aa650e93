"""Over HTTP, after `DELETE /v1/subjects/{id}`: the erased subject's open sessions refuse new
messages at once (410) and their buffered messages are gone; registering the same reference
again is refused with 410 saying how the operator onboards the returning person, and that
way (a new reference) gives a new, empty subject with nothing of the old one readable."""

from __future__ import annotations

from uuid import UUID

import httpx
from support.api_harness import bearer, line, token
from support.api_steps import AGENT, SERVICE, a_lead, ok, saying

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Role
from factledger.application.sessions.ports import SessionBuffer
from factledger.application.sessions.types import SessionId, SessionKey

ADMIN = bearer(token(Role.ADMIN))
RETURNED = bearer(token(Role.AGENT, kind="lead", ref="crm-1~2"))
CANARY = "Quetzal Marmalade 7731"
ERASE = {"reason": "erasure request 4411"}


def buffer_of(ports: Runtime) -> SessionBuffer:
    assert ports.session_buffer is not None
    return ports.session_buffer


def gone(response: httpx.Response) -> str:
    assert response.status_code == 410, response.text
    assert response.json()["error"] == "SubjectErasedError"
    return str(response.json()["detail"])


async def a_lead_in_a_session(http: httpx.AsyncClient) -> str:
    subject_id = await a_lead(http)
    await saying(http, f"We work with {CANARY}.")
    return subject_id


async def test_an_erased_subjects_open_session_refuses_messages_and_its_buffer_is_gone(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    subject_id = await a_lead_in_a_session(http)
    key = SessionKey(UUID(subject_id), SessionId("wa-1"))
    assert await buffer_of(ports).get(key) is not None

    await ok(await http.request("DELETE", f"/v1/subjects/{subject_id}", json=ERASE, headers=ADMIN))

    # The buffered messages went with the subject
    assert await buffer_of(ports).get(key) is None
    # and the session refuses a new message, a read and an end at once, as does a new session
    more = {"role": "agent", "text": "one more thing"}
    gone(await http.post("/v1/subjects/me/sessions/wa-1/messages", json=more, headers=AGENT))
    gone(await http.get("/v1/subjects/me/sessions/wa-1", headers=AGENT))
    gone(await http.get("/v1/subjects/me/sessions/wa-1/messages", headers=AGENT))
    gone(await http.post("/v1/subjects/me/sessions/wa-1/end", json={}, headers=AGENT))
    start = {"session_id": "wa-2", "channel": "whatsapp"}
    gone(await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT))
    assert await buffer_of(ports).get(SessionKey(UUID(subject_id), SessionId("wa-2"))) is None


async def test_registering_an_erased_reference_says_how_to_onboard_the_person_again(
    http: httpx.AsyncClient,
) -> None:
    subject_id = await a_lead_in_a_session(http)
    await ok(await http.request("DELETE", f"/v1/subjects/{subject_id}", json=ERASE, headers=ADMIN))

    # Registering the same reference is refused, saying why and what to do instead
    again = {"kind": "lead", "external_ref": "crm-1"}
    detail = gone(await http.post("/v1/subjects", json=again, headers=SERVICE))
    assert f"subject {subject_id} was erased" in detail
    assert "`returning: true`" in detail
    assert "crm-1" not in detail  # the erased reference is not echoed

    # Done that way, the returning person is a new subject with nothing of the old one
    returned = {"kind": "lead", "external_ref": "crm-1~2"}
    new = await ok(await http.post("/v1/subjects", json=returned, headers=SERVICE), 201)
    assert new["subject_id"] != subject_id
    assert (new["created"], new["profile_version"]) == (True, 0)
    start = {"session_id": "wa-1", "channel": "whatsapp"}
    fresh = await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=RETURNED), 201)
    assert fresh["message_count"] == 0  # the old session of the same id is not theirs
    said = {"role": "subject", "text": "Hello again."}
    url = "/v1/subjects/me/sessions/wa-1/messages"
    await ok(await http.post(**line(url, said, RETURNED)))
    read = await ok(await http.get(url, headers=RETURNED))
    assert [m["text"] for m in read["messages"]] == ["Hello again."]
    events = await ok(await http.get(f"/v1/subjects/{new['subject_id']}/events", headers=ADMIN))
    assert CANARY not in str(events)
    assert [e["topic"] for e in events["events"]] == ["factledger.subject.registered.v1"]


async def test_the_same_reference_returns_as_a_new_subject_nothing_linked(
    http: httpx.AsyncClient, ports: Runtime
) -> None:
    subject_id = await a_lead_in_a_session(http)
    await ok(await http.request("DELETE", f"/v1/subjects/{subject_id}", json=ERASE, headers=ADMIN))

    back = {"kind": "lead", "external_ref": "crm-1", "returning": True}
    new = await ok(await http.post("/v1/subjects", json=back, headers=SERVICE), 201)
    assert new["subject_id"] != subject_id
    assert (new["created"], new["profile_version"], new["external_ref"]) == (True, 0, "crm-1")
    # Its id is not derivable from the reference (a keyed hash, not the reference's uuid5).
    assert UUID(new["subject_id"]).version == 8
    # A retry finds the same new subject; a look-up by reference names it now.
    again = await ok(await http.post("/v1/subjects", json=back, headers=SERVICE), 201)
    assert (again["subject_id"], again["created"]) == (new["subject_id"], False)
    lookup = "/v1/subjects/lookup?kind=lead&external_ref=crm-1"
    assert (await ok(await http.get(lookup, headers=SERVICE)))["subject_id"] == new["subject_id"]
    # The erased subject stays erased; nothing of it is in the new one.
    gone(await http.get(f"/v1/subjects/{subject_id}", headers=SERVICE))
    events = await ok(await http.get(f"/v1/subjects/{new['subject_id']}/events", headers=ADMIN))
    assert CANARY not in str(events)
    assert [e["topic"] for e in events["events"]] == ["factledger.subject.registered.v1"]
    # An agent token bound to the new id talks to the returning person.
    bound = bearer(token(Role.AGENT, subject_id=new["subject_id"]))
    start = {"session_id": "wa-1", "channel": "whatsapp"}
    fresh = await ok(await http.post("/v1/subjects/me/sessions", json=start, headers=bound), 201)
    assert fresh["message_count"] == 0

    # Erased again, the person may return again: a third subject, distinct from both.
    await ok(
        await http.request("DELETE", f"/v1/subjects/{new['subject_id']}", json=ERASE, headers=ADMIN)
    )
    third = await ok(await http.post("/v1/subjects", json=back, headers=SERVICE), 201)
    assert third["subject_id"] not in {subject_id, new["subject_id"]}
    assert third["created"] is True
