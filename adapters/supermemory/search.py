"""Search on Supermemory v5 with the port's semantics.

- The request asks for more than `limit` (filtering happens after), with our threshold, mode
  and the v5 filter; the port's filter is checked again on each hit (a filter v5 cannot
  express, a string range, is only checked here).
- v5 marks both superseded and (with `include.forgotten`) forgotten hits `isLatest=false` and
  reports no `isForgotten` on results; when both could be present, `memories.get` tells them
  apart (bounded by the fetched page).
- Our ledger documents never surface, nor do chunks of transcripts (the port's chunks are
  records); hits whose expiry has passed are dropped at once (or, with `include_forgotten`,
  marked forgotten) even before the forget has reached the server.
"""

from __future__ import annotations

from typing import Any

from supermemory import AsyncSupermemory

from factledger.adapters.supermemory.calls import CallPolicy, Deadline, call
from factledger.adapters.supermemory.mapping import (
    INTERNAL_KINDS,
    KIND,
    KIND_TRANSCRIPT,
    OCCURRED_AT,
    UntranslatableFilterError,
    hit_kind,
    our_document_id,
    parse_time,
    relations_of,
    user_metadata,
    wire_filter,
)
from factledger.application.memory.filters import matches
from factledger.application.memory.types import HitKind, SearchHit, SearchQuery

MAX_FETCH = 100


async def run_search(
    client: AsyncSupermemory,
    policy: CallPolicy,
    deadline: Deadline,
    ns: str,
    query: SearchQuery,
    *,
    expired: set[str],
) -> list[SearchHit]:
    expression: dict[str, Any] | None = None
    if query.filters is not None:
        try:
            expression = wire_filter(query.filters)
        except UntranslatableFilterError:
            expression = None  # a string range: the check below applies it alone
    fetch = min(MAX_FETCH, query.limit * 3 + len(expired) + 5)
    # The SDK sends an explicit None as JSON null, which the spec rejects: omit it instead.
    optional: dict[str, Any] = {} if expression is None else {"filter": expression}
    response = await call(
        "search",
        lambda t: client.search(
            ns,
            query=query.text,
            search_mode=query.mode.value,
            limit=fetch,
            threshold=query.threshold,
            include={"related": True, "forgotten": query.include_forgotten},
            timeout=t,
            **optional,
        ),
        policy,
        deadline,
    )
    hits: list[SearchHit] = []
    for result in response.results or ():
        metadata = result.metadata or {}
        if metadata.get(KIND) in INTERNAL_KINDS:
            continue
        if result.chunk is not None and metadata.get(KIND) == KIND_TRANSCRIPT:
            continue  # the port's chunks are records; transcripts answer through their facts
        if result.id in expired and not query.include_forgotten:
            continue
        # The port's filter semantics (a missing key matches nothing) are checked here as well,
        # so results do not depend on how the engine treats edge cases.
        if query.filters is not None and not matches(query.filters, user_metadata(metadata)):
            continue
        hit = await _to_hit(client, policy, deadline, ns, query, result, result.id in expired)
        if hit is not None:
            hits.append(hit)
    hits.sort(key=lambda h: -h.score)  # stable: keeps the engine's order among equal scores
    return hits[: query.limit]


async def _to_hit(
    client: AsyncSupermemory,
    policy: CallPolicy,
    deadline: Deadline,
    ns: str,
    query: SearchQuery,
    result: Any,
    expired: bool,
) -> SearchHit | None:
    kind = hit_kind(result)
    text = result.memory if kind is HitKind.MEMORY else result.chunk
    if text is None:
        return None
    is_latest, is_forgotten = bool(result.is_latest), False
    if kind is HitKind.MEMORY:
        if result.is_inference and not query.include_inferred:
            return None
        if not is_latest:
            if not query.include_forgotten:
                if not query.include_superseded:
                    return None  # without include.forgotten, isLatest=false means superseded
            else:
                details = await call(
                    "memories.get",
                    lambda t: client.memories.get(ns, result.id, timeout=t),
                    policy,
                    deadline,
                )
                is_forgotten, is_latest = bool(details.is_forgotten), bool(details.is_latest)
                if not is_forgotten and not query.include_superseded:
                    return None
    metadata = result.metadata or {}
    return SearchHit(
        id=result.id,
        text=text,
        score=float(result.similarity),
        kind=kind,
        is_latest=is_latest,
        is_inference=bool(result.is_inference),
        occurred_at=parse_time(metadata.get(OCCURRED_AT)),
        document_id=our_document_id(metadata),
        relations=relations_of(result.included) if kind is HitKind.MEMORY else (),
        is_forgotten=is_forgotten or expired,
        metadata=user_metadata(metadata),
    )
