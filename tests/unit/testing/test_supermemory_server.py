"""The local Supermemory server speaks the v5 spec: validation, auth, pipeline, search, faults."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.testing.scripted_extractor import ScriptedExtractor, stated
from factledger.testing.supermemory.engine import ProcessingTiming
from factledger.testing.supermemory.faults import Fault, FaultPlan, LatencyProfile, LatencySampler
from factledger.testing.supermemory.server import DEFAULT_API_KEY, SupermemoryServer
from factledger.testing.supermemory.spec import response_issues

AUTH = {"Authorization": f"Bearer {DEFAULT_API_KEY}"}


def make_server(**options: Any) -> tuple[SupermemoryServer, ScriptedExtractor]:
    extractor = ScriptedExtractor()
    extractor.script("I live in Berlin", stated("f0", "Lives in Berlin", slot="city"))
    extractor.script("I moved to Paris", stated("f0", "Lives in Paris", slot="city", updates=True))
    return SupermemoryServer(extractor, HashingEmbedder(256), **options), extractor


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    server, _ = make_server()
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sm", headers=AUTH) as c:
        yield c


async def add(http: httpx.AsyncClient, ns: str, content: str, **body: Any) -> dict[str, Any]:
    response = await http.post(f"/ns/{ns}/document", json={"content": content, **body})
    assert response.status_code == 200, response.text
    payload: dict[str, Any] = response.json()
    return payload


async def test_an_unknown_body_field_is_a_400_in_the_validation_shape(
    http: httpx.AsyncClient,
) -> None:
    response = await http.post("/ns/u1/search", json={"query": "x", "q": "legacy v4 name"})

    assert response.status_code == 400
    body = response.json()
    assert body["success"] is False
    assert "'q' was unexpected" in body["error"][0]["message"]
    assert response_issues("post", "/ns/{namespace}/search", 400, body) == []


async def test_a_wrong_type_is_a_400_naming_the_field(http: httpx.AsyncClient) -> None:
    response = await http.post("/ns/u1/search", json={"query": "x", "limit": "3"})

    assert response.status_code == 400
    assert response.json()["error"][0]["path"] == ["limit"]


async def test_a_wrong_query_parameter_type_and_an_unknown_one_are_400s(
    http: httpx.AsyncClient,
) -> None:
    wrong_type = await http.post("/ns/u1/list/memories?limit=many", json={})
    unknown = await http.post("/ns/u1/list/memories?pageSize=5", json={})

    assert wrong_type.status_code == 400
    assert wrong_type.json()["error"][0]["path"] == ["query", "limit"]
    assert unknown.status_code == 400


async def test_a_namespace_outside_the_pattern_is_a_400(http: httpx.AsyncClient) -> None:
    response = await http.post("/ns/user.42/search", json={"query": "x"})

    assert response.status_code == 400
    assert response.json()["error"][0]["path"] == ["path", "namespace"]


async def test_a_filter_nested_deeper_than_five_levels_is_a_400(http: httpx.AsyncClient) -> None:
    expression: dict[str, Any] = {"field": "a", "operator": "eq", "value": "x"}
    for _ in range(6):
        expression = {"operator": "and", "operands": [expression]}

    response = await http.post("/ns/u1/search", json={"query": "x", "filter": expression})

    assert response.status_code == 400


async def test_requests_without_the_bearer_key_are_401(http: httpx.AsyncClient) -> None:
    missing = await http.post("/ns/u1/search", json={"query": "x"}, headers={"Authorization": ""})
    wrong = await http.post(
        "/ns/u1/search", json={"query": "x"}, headers={"Authorization": "Bearer nope"}
    )

    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert missing.json() == {"error": "Unauthorized"}


async def test_get_document_accepts_both_include_encodings_and_either_id(
    http: httpx.AsyncClient,
) -> None:
    ref = await add(http, "u1", "subject: I live in Berlin", id="t1", dreaming="instant")

    comma = await http.get("/ns/u1/document/t1?include=chunks,memories")
    repeated = await http.get(f"/ns/u1/document/{ref['id']}?include=chunks&include=memories")

    for response in (comma, repeated):
        body = response.json()
        assert response_issues("get", "/ns/{namespace}/document/{id}", 200, body) == []
        assert [m["memory"] for m in body["memories"]] == ["Lives in Berlin"]
        assert [c["content"] for c in body["chunks"]] == ["subject: I live in Berlin"]
    assert comma.json()["id"] == repeated.json()["id"] == ref["id"]


async def test_dynamic_dreaming_lags_behind_chunks_and_instant_does_not() -> None:
    server, _ = make_server(timing=ProcessingTiming(processing_s=0.0, dreaming_s=600.0))
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sm", headers=AUTH) as http:
        ref = await add(http, "u1", "subject: I live in Berlin", id="slow")
        await add(http, "u1", "subject: I moved to Paris", id="fast", dreaming="instant")

        slow = (await http.get("/ns/u1/document/slow?include=memories")).json()
        fast = (await http.get("/ns/u1/document/fast?include=memories")).json()

    assert ref["status"] == "queued"
    assert (slow["system"]["status"], slow["system"]["dreamingStatus"]) == ("done", "dreaming")
    assert slow["memories"] == []
    assert (fast["system"]["status"], fast["system"]["dreamingStatus"]) == ("done", "done")
    assert [m["memory"] for m in fast["memories"]] == ["Lives in Paris"]


async def test_superrag_builds_chunks_only_and_never_calls_the_extractor() -> None:
    server, extractor = make_server()
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sm", headers=AUTH) as http:
        await add(http, "u1", '{"k": "I live in Berlin"}', id="r1", taskType="superrag")
        doc = (await http.get("/ns/u1/document/r1?include=chunks,memories")).json()

    assert doc["system"]["dreamingStatus"] == "done"
    assert doc["memories"] == []
    assert [c["content"] for c in doc["chunks"]] == ['{"k": "I live in Berlin"}']
    assert extractor.requests == []


async def test_re_adding_an_id_is_done_when_unchanged_and_appends_otherwise() -> None:
    server, extractor = make_server()
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sm", headers=AUTH) as http:
        first = await add(http, "u1", "subject: I live in Berlin", id="t1", dreaming="instant")
        await http.get("/ns/u1/document/t1")  # lets processing run
        same = await add(http, "u1", "subject: I live in Berlin", id="t1", dreaming="instant")
        appended = await add(
            http,
            "u1",
            "subject: I live in Berlin\nsubject: I moved to Paris",
            id="t1",
            dreaming="instant",
        )
        doc = (await http.get("/ns/u1/document/t1?include=memories")).json()

    assert same == {"id": first["id"], "status": "done"}
    assert appended == {"id": first["id"], "status": "queued"}
    assert [r.transcript[0].text for r in extractor.requests] == [
        "I live in Berlin",
        "I moved to Paris",
    ]
    assert [(m["memory"], m["version"]) for m in doc["memories"]] == [
        ("Lives in Berlin", 1),
        ("Lives in Paris", 2),
    ]


async def test_search_modes_threshold_limit_and_forgotten(http: httpx.AsyncClient) -> None:
    await add(http, "u1", "subject: I live in Berlin", id="t1", dreaming="instant")
    await add(http, "u1", "subject: I moved to Paris", id="t2", dreaming="instant")

    async def search(**body: Any) -> list[dict[str, Any]]:
        response = await http.post("/ns/u1/search", json={"query": "lives in paris", **body})
        assert response_issues("post", "/ns/{namespace}/search", 200, response.json()) == []
        results: list[dict[str, Any]] = response.json()["results"]
        return results

    memories = await search(searchMode="memories", threshold=0.0)
    chunks = await search(searchMode="chunks", threshold=0.0)
    hybrid = await search(threshold=0.0, limit=3)
    default_threshold = await search(searchMode="memories")
    paris = next(r for r in memories if r["memory"] == "Lives in Paris")
    forget = await http.request("DELETE", "/ns/u1/memories", json={"ids": [paris["id"], "nope"]})
    after = await search(searchMode="memories", threshold=0.0)
    with_forgotten = await search(searchMode="memories", threshold=0.0, include={"forgotten": True})

    assert all("memory" in r and "chunk" not in r for r in memories)
    assert all("chunk" in r and "memory" not in r for r in chunks)
    assert len(hybrid) == 3
    assert [r["similarity"] for r in hybrid] == sorted(
        (r["similarity"] for r in hybrid), reverse=True
    )
    assert all(r["similarity"] >= 0.3 for r in default_threshold)
    assert {(r["memory"], r["isLatest"]) for r in memories} == {
        ("Lives in Paris", True),
        ("Lives in Berlin", False),
    }
    assert forget.json() == {
        "count": 1,
        "errors": [{"id": "nope", "error": "Memory not found"}],
        "matches": [{"id": paris["id"], "memory": "Lives in Paris"}],
    }
    assert paris["id"] not in [r["id"] for r in after]
    assert next(r for r in with_forgotten if r["id"] == paris["id"])["isLatest"] is False


async def test_filters_follow_the_v5_grammar(http: httpx.AsyncClient) -> None:
    await add(
        http,
        "u1",
        "note one",
        id="a",
        taskType="superrag",
        metadata={"channel": "Voice", "priority": 3, "tags": ["billing"]},
    )
    await add(http, "u1", "note two", id="b", taskType="superrag", metadata={"priority": 1})

    async def ids(expression: dict[str, Any]) -> set[str]:
        body = {"filter": expression, "include": {"content": True}}
        response = await http.post("/ns/u1/list/documents", json=body)
        return {d["content"] for d in response.json()["documents"]}

    assert await ids({"field": "channel", "operator": "eq", "value": "voice"}) == set()
    assert await ids(
        {"field": "channel", "operator": "eq", "value": "voice", "caseSensitive": False}
    ) == {"note one"}
    assert await ids({"field": "channel", "operator": "neq", "value": "Voice"}) == {"note two"}
    assert await ids({"field": "priority", "operator": "gt", "value": 2}) == {"note one"}
    assert await ids({"field": "tags", "operator": "arrayContains", "value": "billing"}) == {
        "note one"
    }
    assert await ids(
        {
            "operator": "or",
            "operands": [
                {"field": "priority", "operator": "lt", "value": 2},
                {"field": "channel", "operator": "contains", "value": "oic"},
            ],
        }
    ) == {"note one", "note two"}


async def test_deleting_a_namespace_removes_it_and_a_second_delete_is_404(
    http: httpx.AsyncClient,
) -> None:
    await add(http, "u1", "subject: I live in Berlin", id="t1", dreaming="instant")
    await add(http, "u2", "subject: I live in Berlin", id="t1", dreaming="instant")

    deleted = await http.delete("/ns/u1")
    again = await http.delete("/ns/u1")
    gone = await http.get("/ns/u1/document/t1")
    kept = await http.get("/ns/u2/document/t1")

    assert deleted.json()["status"] == "deleted"
    assert (again.status_code, gone.status_code, kept.status_code) == (404, 404, 200)


async def test_list_memories_pages_and_conforms_to_the_spec(http: httpx.AsyncClient) -> None:
    await add(http, "u1", "subject: I live in Berlin", id="t1", dreaming="instant")
    await add(http, "u1", "subject: I moved to Paris", id="t2", dreaming="instant")

    page1 = (await http.post("/ns/u1/list/memories?limit=1&order=asc", json={})).json()
    page2 = (await http.post("/ns/u1/list/memories?limit=1&page=2&order=asc", json={})).json()

    assert response_issues("post", "/ns/{namespace}/list/{type}", 200, page1) == []
    assert [m["memory"] for m in page1["memories"] + page2["memories"]] == [
        "Lives in Berlin",
        "Lives in Paris",
    ]
    assert page1["pagination"]["totalPages"] == 2
    assert page1["documents"] == page1["chunks"] == []


async def test_scripted_faults_answer_in_order_then_service_resumes() -> None:
    faults = FaultPlan()
    faults.push(Fault(status=429, retry_after_s=2), times=1)
    faults.push(Fault(status=402, operations=frozenset({"add"})))
    server, _ = make_server(faults=faults)
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sm", headers=AUTH) as http:
        limited = await http.post("/ns/u1/search", json={"query": "x"})
        searched = await http.post("/ns/u1/search", json={"query": "x"})
        unpaid = await http.post("/ns/u1/document", json={"content": "x"})

    assert (limited.status_code, limited.headers["Retry-After"]) == (429, "2")
    assert searched.status_code == 200
    assert unpaid.status_code == 402
    assert unpaid.json() == {"error": "Insufficient credits"}
    assert faults.served == [("search", 429), ("add", 402)]


async def test_every_answer_of_a_full_session_conforms_to_the_response_schemas() -> None:
    server, _ = make_server()
    transport = httpx.ASGITransport(app=server.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sm", headers=AUTH) as http:
        await add(http, "u1", "subject: I live in Berlin", id="t1", dreaming="instant")
        await add(http, "u1", "subject: I moved to Paris", id="t2", dreaming="instant")
        found = await http.post(
            "/ns/u1/search",
            json={"query": "paris", "include": {"related": True, "documents": True}},
        )
        memory_id = found.json()["results"][0]["id"]
        details = await http.get(f"/ns/u1/memories/{memory_id}?include=related,documents")
        listed = await http.post("/ns/u1/list/chunks", json={})
        spaces = await http.get("/ns?limit=5")
        dropped = await http.delete("/ns/u1")

    assert [r.status_code for r in (found, details, listed, spaces, dropped)] == [200] * 5
    assert [n["namespace"] for n in spaces.json()["namespaces"]] == ["u1"]
    assert server.response_issues == []
    # and the check itself does catch a body off the spec:
    assert response_issues("get", "/ns/{namespace}/memories/{id}", 200, {"id": 1}) != []


def test_the_observed_latency_profile_is_seeded_and_stalls_rarely() -> None:
    first = LatencySampler(LatencyProfile.observed(seed=3))
    second = LatencySampler(LatencyProfile.observed(seed=3))

    delays = [first.delay("search") for _ in range(10_000)]
    stalls = [d for d in delays if d == 38.0]
    typical = sorted(d for d in delays if d != 38.0)

    assert delays[:100] == [second.delay("search") for _ in range(100)]
    assert 50 <= len(stalls) <= 150  # 1 % of 10,000, seeded
    assert 0.45 <= typical[len(typical) // 2] <= 0.55
    assert min(typical) >= 0.05


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_status_walks_the_documented_stages_and_early_reads_are_404() -> None:
    clock = FakeMonotonic()
    timing = ProcessingTiming(processing_s=10.0, dreaming_s=20.0, read_after_write_404_s=2.0)
    server, _ = make_server(timing=timing, monotonic=clock)
    transport = httpx.ASGITransport(app=server.app)
    seen: list[tuple[int, str | None, str | None]] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://sm", headers=AUTH) as http:
        await add(http, "u1", "subject: I live in Berlin", id="t1")
        for offset in (1.0, 3.0, 5.0, 7.0, 9.5, 10.0, 21.0):
            clock.now = 1000.0 + offset
            response = await http.get("/ns/u1/document/t1?include=memories")
            system = response.json().get("system", {})
            seen.append((response.status_code, system.get("status"), system.get("dreamingStatus")))
        memories = (await http.get("/ns/u1/document/t1?include=memories")).json()["memories"]

    assert seen == [
        (404, None, None),
        (200, "extracting", "dreaming"),
        (200, "chunking", "dreaming"),
        (200, "embedding", "dreaming"),
        (200, "indexing", "dreaming"),
        (200, "done", "dreaming"),
        (200, "done", "done"),
    ]
    assert [m["memory"] for m in memories] == ["Lives in Berlin"]


def test_random_fault_rates_are_seeded_and_scripted_faults_come_first() -> None:
    def run() -> list[int | None]:
        plan = FaultPlan(rates={503: 0.1, 429: 0.05}, seed=5)
        plan.push(Fault(status=402))
        return [f.status if (f := plan.next_fault("search")) else None for _ in range(2000)]

    first, second = run(), run()

    assert first == second
    assert first[0] == 402
    assert 120 <= first.count(503) <= 280  # ~10 % of 2,000
    assert 40 <= first.count(429) <= 160  # ~5 % of what the 503 draw left
    assert LatencySampler(LatencyProfile(operations=frozenset({"add"}))).delay("search") == 0.0


async def test_a_client_gone_during_a_stall_gets_no_answer_and_raises_nothing() -> None:
    server, _ = make_server()
    server.faults.push(Fault(stall_s=0.01))
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}  # the adapter's deadline passed during the stall

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/ns/subject-a/document",
        "raw_path": b"/ns/subject-a/document",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"authorization", AUTH["Authorization"].encode())],
        "client": ("127.0.0.1", 1),
        "server": ("sm", 80),
    }

    await server.app(scope, receive, send)

    assert sent[0]["type"] == "http.response.start"
    assert sent[0]["status"] == 499
