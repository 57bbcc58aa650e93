"""The local Supermemory server is as strict as the v5 spec on the calls the adapter makes:
one test per behaviour where a kinder stand-in once hid what the service does.

- a search's `filter` applies to the memories `include.related` lists beside a result;
- forgotten memories stay out of `related` (search and `memories.get`) unless a search asks
  for them with `include.forgotten`;
- `forget` lists in `matches` the memories it forgot, and `count` counts them;
- `DELETE /ns/{ns}?moveTo=` moves the namespace's content (202, `queued`) instead of deleting it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.testing.scripted_extractor import ScriptedExtractor, stated
from factledger.testing.supermemory.server import DEFAULT_API_KEY, SupermemoryServer
from factledger.testing.supermemory.spec import response_issues

AUTH = {"Authorization": f"Bearer {DEFAULT_API_KEY}"}
SEARCH = "/ns/{namespace}/search"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    extractor = ScriptedExtractor()
    extractor.script("I live in Berlin", stated("f0", "Lives in Berlin", slot="city"))
    extractor.script("I moved to Paris", stated("f0", "Lives in Paris", slot="city", updates=True))
    server = SupermemoryServer(extractor, HashingEmbedder(256), check_responses=True)
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sm", headers=AUTH) as c:
        yield c


async def moved_city(http: httpx.AsyncClient, ns: str = "u1") -> None:
    """Berlin said on a voice call, then Paris in a chat: Paris `updates` Berlin."""
    for ref, text, channel in (
        ("t1", "subject: I live in Berlin", "voice"),
        ("t2", "subject: I moved to Paris", "chat"),
    ):
        body = {"content": text, "id": ref, "dreaming": "instant", "metadata": {"channel": channel}}
        assert (await http.post(f"/ns/{ns}/document", json=body)).status_code == 200


async def paris_hit(http: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    request = {"query": "lives in paris", "searchMode": "memories", "threshold": 0.0, **body}
    response = await http.post("/ns/u1/search", json=request)
    assert response.status_code == 200, response.text
    assert response_issues("post", SEARCH, 200, response.json()) == []
    return next(r for r in response.json()["results"] if r["memory"] == "Lives in Paris")


def parents(hit: dict[str, Any]) -> list[str]:
    return [p["memory"] for p in hit["included"]["related"]["parents"]]


async def test_related_memories_obey_the_search_filter(http: httpx.AsyncClient) -> None:
    await moved_city(http)
    unfiltered = await paris_hit(http, include={"related": True})
    chat_only = {"field": "channel", "operator": "eq", "value": "chat"}
    filtered = await paris_hit(http, include={"related": True}, filter=chat_only)
    assert parents(unfiltered) == ["Lives in Berlin"]
    assert parents(filtered) == []  # Berlin was said on a voice call


async def test_forgotten_memories_stay_out_of_related(http: httpx.AsyncClient) -> None:
    await moved_city(http)
    berlin = (await paris_hit(http, include={"related": True}))["included"]["related"]["parents"][0]
    forgot = await http.request("DELETE", "/ns/u1/memories", json={"ids": [berlin["id"]]})
    assert forgot.status_code == 200

    searched = await paris_hit(http, include={"related": True})
    asked_for = await paris_hit(http, include={"related": True, "forgotten": True})
    paris_id = searched["id"]
    details = await http.get(f"/ns/u1/memories/{paris_id}", params={"include": "related"})

    assert parents(searched) == []
    assert parents(asked_for) == ["Lives in Berlin"]
    assert details.status_code == 200
    assert details.json()["included"]["related"]["parents"] == []
    # The chain still runs through it: Berlin's own details name Paris as its child.
    berlin_details = await http.get(
        f"/ns/u1/memories/{berlin['id']}", params={"include": "related"}
    )
    children = berlin_details.json()["included"]["related"]["children"]
    assert [c["memory"] for c in children] == ["Lives in Paris"]


async def test_forget_lists_what_it_forgot_in_matches(http: httpx.AsyncClient) -> None:
    await moved_city(http)
    paris = await paris_hit(http)
    first = await http.request("DELETE", "/ns/u1/memories", json={"ids": [paris["id"], "nope"]})
    again = await http.request("DELETE", "/ns/u1/memories", json={"ids": [paris["id"]]})

    assert first.json() == {
        "count": 1,
        "errors": [{"id": "nope", "error": "Memory not found"}],
        "matches": [{"id": paris["id"], "memory": "Lives in Paris"}],
    }
    assert again.json() == {"count": 0, "errors": [], "matches": []}  # already forgotten
    assert response_issues("delete", "/ns/{namespace}/memories", 200, first.json()) == []


async def test_deleting_with_move_to_moves_the_content(http: httpx.AsyncClient) -> None:
    await moved_city(http)
    moved = await http.delete("/ns/u1", params={"moveTo": "u9"})

    assert moved.status_code == 202
    body = moved.json()
    assert (body["status"], body["namespace"], body["moveTo"]) == ("queued", "u1", "u9")
    assert body["operationId"]
    assert response_issues("delete", "/ns/{namespace}", 202, body) == []
    assert (await http.get("/ns/u1/document/t1")).status_code == 404
    assert (await http.get("/ns/u9/document/t1")).status_code == 200
    listed = await http.post("/ns/u9/list/memories", json={})
    assert {m["memory"] for m in listed.json()["memories"]} == {"Lives in Berlin", "Lives in Paris"}


async def test_a_move_onto_itself_is_a_400_and_of_no_namespace_a_404(
    http: httpx.AsyncClient,
) -> None:
    await moved_city(http)
    onto_itself = await http.delete("/ns/u1", params={"moveTo": "u1"})
    nowhere = await http.delete("/ns/nobody", params={"moveTo": "u9"})
    assert onto_itself.status_code == 400
    assert "moveTo" in onto_itself.json()["error"]
    assert nowhere.status_code == 404
    assert (await http.get("/ns/u1/document/t1")).status_code == 200  # nothing moved


async def test_deleting_without_move_to_still_deletes(http: httpx.AsyncClient) -> None:
    await moved_city(http)
    deleted = await http.delete("/ns/u1")
    assert deleted.status_code == 200
    assert deleted.json()["status"] == "deleted"
    assert (await http.get("/ns/u1/document/t1")).status_code == 404
