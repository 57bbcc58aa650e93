"""Dead letters of the sync to the memory backend: list and retry (admins and services).

The sync's store is shared by every tenant; this router only ever shows or retries the items
of subjects in the caller's tenant (the store filters by the tenant each item carries), with
error types and ids only, never content.
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, Field

from factledger.api.http.deps import Operator, StateDep
from factledger.api.http.errors import ServiceUnavailableError
from factledger.api.http.schemas.common import ERRORS
from factledger.application.errors import NotFoundError
from factledger.application.sync.ports import SyncStore

router = APIRouter(prefix="/v1/dead-letters", tags=["operations"], responses=ERRORS)  # type: ignore[arg-type]
ITEM_ID = r"^[0-9]{1,19}\.[0-9]{1,6}$"


class DeadLetterOut(BaseModel):
    item_id: str = Field(examples=["1042.0"])
    position: int
    subject_id: UUID
    kind: str = Field(examples=["transcript"])
    targets: list[str]
    attempts: int
    error_type: str = Field(examples=["MemoryUnavailableError"])


class DeadLetterList(BaseModel):
    items: list[DeadLetterOut]
    next_after: str | None = Field(
        default=None, description="Pass as `after` for the next page; null on the last page."
    )


class RetryOut(BaseModel):
    retried: int


async def get_sync_store(state: StateDep) -> SyncStore:
    store = state.require_ports().sync_store
    if store is None:
        raise ServiceUnavailableError("the sync is not configured")
    return store


SyncStoreDep = Annotated[SyncStore, Depends(get_sync_store)]


@router.get("", summary="Items the sync gave up on, in this tenant")
async def list_dead_letters(
    principal: Operator,
    store: SyncStoreDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    after: Annotated[
        str | None, Query(pattern=ITEM_ID, description="The `next_after` of the previous page.")
    ] = None,
) -> DeadLetterList:
    letters = await store.dead_letters(tenant=principal.tenant, after=after, limit=limit)
    return DeadLetterList(
        items=[
            DeadLetterOut(
                item_id=d.item_id,
                position=d.position,
                subject_id=d.subject_id,
                kind=d.kind.value,
                targets=list(d.targets),
                attempts=d.attempts,
                error_type=d.error_type,
            )
            for d in letters
        ],
        next_after=letters[-1].item_id if len(letters) == limit else None,
    )


@router.post("/retry", summary="Make every dead letter of this tenant pending again")
async def retry_all(principal: Operator, store: SyncStoreDep) -> RetryOut:
    return RetryOut(retried=await store.retry_dead(tenant=principal.tenant))


@router.post("/{item_id}/retry", summary="Make one dead letter pending again")
async def retry_one(
    item_id: Annotated[str, Path(pattern=ITEM_ID)], principal: Operator, store: SyncStoreDep
) -> RetryOut:
    retried = await store.retry_dead([item_id], tenant=principal.tenant)
    if not retried:
        raise NotFoundError(f"dead letter {item_id}")
    return RetryOut(retried=retried)
