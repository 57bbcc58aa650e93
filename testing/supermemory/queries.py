"""Read operations of the local Supermemory server: documents, search, lists, memory details.

Search semantics (v5): `similarity` is the cosine of the query and the item, floored at 0;
hits below `threshold` (default 0.3) are dropped; `limit` (default 10) caps the list.
Memories are searchable once their document has dreamed, chunks once it is `done`.
Superseded memories are returned with `isLatest=false` (callers filter them); forgotten ones
only with `include.forgotten`, and then also with `isLatest=false`, as the reference notes.
The same holds for the memories `include.related` lists beside a result, and so does the
search's `filter`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from factledger.testing.supermemory.engine import EngineNotFoundError, SupermemoryEngine
from factledger.testing.supermemory.filters import matches
from factledger.testing.supermemory.model import Memory, NamespaceState, iso

JsonObject = dict[str, Any]
MAX_CHAIN = 3


def get_document(
    engine: SupermemoryEngine, namespace: str, any_id: str, include: list[str]
) -> JsonObject:
    doc = engine.state(namespace).document(any_id) if namespace in engine.namespaces else None
    if doc is None or engine.monotonic() < doc.visible_at:
        raise EngineNotFoundError("Document")
    state = engine.namespaces[namespace]
    body = doc.wire()
    if "chunks" in include:
        body["chunks"] = [
            {
                "id": chunk.id,
                "position": chunk.position,
                "content": chunk.content,
                "type": "text",
                "metadata": dict(doc.metadata),
                "system": {"createdAt": iso(chunk.created_at)},
            }
            for chunk in (state.chunks[c] for c in doc.chunk_ids)
        ]
    if "memories" in include:
        body["memories"] = [state.memories[m].wire() for m in doc.memory_ids if m in state.memories]
    return body


def _related_item(
    state: NamespaceState, memory: Memory, relation: str, documents: bool
) -> JsonObject:
    item: JsonObject = {
        "id": memory.id,
        "relation": relation,
        "version": memory.version,
        "memory": memory.text,
        "metadata": dict(memory.metadata),
        "system": {"updatedAt": iso(memory.updated_at)},
    }
    if documents and memory.document_id in state.documents:
        item["document"] = state.documents[memory.document_id].included_wire()
    return item


def related(
    state: NamespaceState,
    memory: Memory,
    limit: int,
    *,
    documents: bool = False,
    forgotten: bool = False,
    expression: JsonObject | None = None,
) -> JsonObject:
    """parents: earlier versions (nearest first) and derives sources; children: later
    versions; siblings: the memories this one extends.

    Related memories obey what the results themselves obey: a forgotten one is listed only
    with `forgotten` (search's `include.forgotten`), and a search's `filter` applies to them
    too. The version chain is walked through the ones left out: they are skipped, not ends.
    """

    def shown(other: Memory) -> bool:
        return (forgotten or not other.is_forgotten) and matches(expression, other.metadata)

    parents: list[JsonObject] = []
    cursor, steps = memory, 0
    while cursor.updates and steps < MAX_CHAIN and cursor.updates in state.memories:
        cursor, steps = state.memories[cursor.updates], steps + 1
        if shown(cursor):
            parents.append(_related_item(state, cursor, "updates", documents))
    parents += [
        _related_item(state, state.memories[t], "derives", documents)
        for t in memory.derives
        if t in state.memories and shown(state.memories[t])
    ]
    children: list[JsonObject] = []
    cursor, steps = memory, 0
    while steps < MAX_CHAIN:
        nxt = next((m for m in state.memories.values() if m.updates == cursor.id), None)
        if nxt is None:
            break
        cursor, steps = nxt, steps + 1
        if shown(nxt):
            children.append(_related_item(state, nxt, "updates", documents))
    siblings = [
        _related_item(state, state.memories[t], "extends", documents)
        for t in memory.extends
        if t in state.memories and shown(state.memories[t])
    ]
    return {"parents": parents[:limit], "children": children[:limit], "siblings": siblings[:limit]}


def memory_details(
    engine: SupermemoryEngine,
    namespace: str,
    memory_id: str,
    include: list[str],
    related_limit: int,
) -> JsonObject:
    state = engine.namespaces.get(namespace)
    memory = state.memories.get(memory_id) if state else None
    if state is None or memory is None:
        raise EngineNotFoundError("Memory")
    body = memory.wire()
    included: JsonObject = {}
    if "related" in include:
        included["related"] = related(
            state, memory, related_limit, documents="documents" in include
        )
    if "documents" in include and memory.document_id in state.documents:
        included["document"] = state.documents[memory.document_id].included_wire()
    if included:
        body["included"] = included
    return body


def _similarity(query: np.ndarray[Any, Any], vector: np.ndarray[Any, Any]) -> float:
    value = float(np.dot(query, vector))
    return max(0.0, min(1.0, value)) if math.isfinite(value) else 0.0


async def search(engine: SupermemoryEngine, namespace: str, body: JsonObject) -> list[JsonObject]:
    state = engine.namespaces.get(namespace)
    if state is None:
        return []
    mode = body.get("searchMode", "hybrid")
    include: JsonObject = body.get("include", {})
    threshold = float(body.get("threshold", 0.3))
    query = (await engine.embedder.embed([body["query"]]))[0]
    scored: list[tuple[float, JsonObject]] = []
    if mode in ("memories", "hybrid"):
        for memory in state.memories.values():
            if memory.is_forgotten and not include.get("forgotten"):
                continue
            if not matches(body.get("filter"), memory.metadata):
                continue
            found = _memory_hit(state, memory, include, body.get("filter"))
            scored.append((_similarity(query, memory.vector), found))
    if mode in ("chunks", "hybrid"):
        for chunk in state.chunks.values():
            doc = state.documents[chunk.document_id]
            if doc.status != "done" or not matches(body.get("filter"), doc.metadata):
                continue
            hit: JsonObject = {
                "id": chunk.id,
                "chunk": chunk.content,
                "metadata": dict(doc.metadata),
                "isLatest": True,
                "isInference": False,
                "system": {"updatedAt": iso(doc.updated_at), "createdAt": iso(chunk.created_at)},
            }
            if include.get("documents"):
                hit["included"] = {"document": doc.included_wire()}
            scored.append((_similarity(query, chunk.vector), hit))
    kept = [(score, hit) for score, hit in scored if score >= threshold]
    kept.sort(key=lambda pair: -pair[0])
    return [{**hit, "similarity": round(score, 6)} for score, hit in kept[: body.get("limit", 10)]]


def _memory_hit(
    state: NamespaceState, memory: Memory, include: JsonObject, expression: JsonObject | None
) -> JsonObject:
    hit: JsonObject = {
        "id": memory.id,
        "memory": memory.text,
        "metadata": dict(memory.metadata),
        "isLatest": memory.is_latest and not memory.is_forgotten,
        "isInference": memory.is_inference,
        "system": {"updatedAt": iso(memory.updated_at), "createdAt": iso(memory.created_at)},
    }
    included: JsonObject = {}
    if include.get("related"):
        included["related"] = related(
            state,
            memory,
            10,
            forgotten=bool(include.get("forgotten")),
            expression=expression,
        )
    if include.get("documents") and memory.document_id in state.documents:
        included["document"] = state.documents[memory.document_id].included_wire()
    if included:
        hit["included"] = included
    return hit


def list_items(
    engine: SupermemoryEngine, namespace: str, kind: str, query: JsonObject, body: JsonObject
) -> JsonObject:
    state = engine.namespaces.get(namespace) or NamespaceState()
    include: JsonObject = {"content": False, "forgotten": False, "memoryCount": True}
    include |= body.get("include", {})
    expression = body.get("filter")
    items: list[JsonObject]
    if kind == "memories":
        items = [
            m.wire()
            for m in state.memories.values()
            if (include["forgotten"] or not m.is_forgotten) and matches(expression, m.metadata)
        ]
    elif kind == "documents":
        items = []
        for doc in state.documents.values():
            if matches(expression, doc.metadata):
                item = doc.wire(content=include["content"]) | {"url": None}
                if include["memoryCount"]:
                    item["system"]["memoryCount"] = len(doc.memory_ids)
                items.append(item)
    else:
        items = [
            {
                "id": c.id,
                "position": c.position,
                "content": c.content,
                "type": "text",
                "metadata": dict(state.documents[c.document_id].metadata),
                "system": {"createdAt": iso(c.created_at)},
                "documentId": c.document_id,
            }
            for c in state.chunks.values()
            if matches(expression, state.documents[c.document_id].metadata)
        ]
    sort_key = query.get("sort", "createdAt")
    field = "position" if sort_key == "position" and kind == "chunks" else sort_key
    items.sort(
        key=lambda item: item.get(field, item["system"].get(field, "")),
        reverse=query.get("order", "desc") == "desc",
    )
    page, limit = int(query.get("page", 1)), int(query.get("limit", 10))
    total = len(items)
    window = items[(page - 1) * limit : page * limit]
    return {
        "documents": window if kind == "documents" else [],
        "chunks": window if kind == "chunks" else [],
        "memories": window if kind == "memories" else [],
        "pagination": {
            "currentPage": page,
            "limit": limit,
            "totalItems": total,
            "totalPages": max(1, math.ceil(total / limit)),
        },
    }
