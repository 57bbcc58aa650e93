"""Dead letters of the sync to the memory backend: list and retry (admins and services).

The sync's store is shared by every tenant; this router only ever shows or retries the items
of subjects in the caller's tenant (error types and ids only, never content).
"""

from __future__ import annotations

import asyncio
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, Field

from factledger.api.http.deps import LedgerDep, Operator, StateDep
from factledger.api.http.errors import ServiceUnavailableError
from factledger.api.http.schemas.common import ERRORS
from factledger.application.errors import NotFoundError
from factledger.application.ledger.ledger import Ledger
from factledger.application.sync.ports import SyncStore
from factledger.application.sync.types import DeadLetter

router = APIRouter(prefix="/v1/dead-letters", tags=["operations"], responses=ERRORS)  # type: ignore[arg-type]
SCAN_LIMIT = 1000


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


class RetryOut(BaseModel):
    retried: int


def get_sync_store(state: StateDep) -> SyncStore:
    store = state.require_ports().sync_store
    if store is None:
        raise ServiceUnavailableError("the sync is not configured")
    return store


SyncStoreDep = Annotated[SyncStore, Depends(get_sync_store)]


def _in_tenant(ledger: Ledger, tenant: str, subject_ids: set[UUID]) -> set[UUID]:
    mine = set()
    for subject_id in subject_ids:
        try:
            ledger.subject(tenant, subject_id)
        except NotFoundError:
            continue
        mine.add(subject_id)
    return mine


async def _tenant_letters(store: SyncStore, ledger: Ledger, tenant: str) -> list[DeadLetter]:
    letters = await store.dead_letters(limit=SCAN_LIMIT)
    mine = await asyncio.to_thread(_in_tenant, ledger, tenant, {d.subject_id for d in letters})
    return [d for d in letters if d.subject_id in mine]


@router.get("", summary="Items the sync gave up on, in this tenant")
async def list_dead_letters(
    principal: Operator,
    store: SyncStoreDep,
    ledger: LedgerDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> DeadLetterList:
    letters = (await _tenant_letters(store, ledger, principal.tenant))[:limit]
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
        ]
    )


@router.post("/retry", summary="Make every dead letter of this tenant pending again")
async def retry_all(principal: Operator, store: SyncStoreDep, ledger: LedgerDep) -> RetryOut:
    ids = [d.item_id for d in await _tenant_letters(store, ledger, principal.tenant)]
    return RetryOut(retried=await store.retry_dead(ids) if ids else 0)


@router.post("/{item_id}/retry", summary="Make one dead letter pending again")
async def retry_one(
    item_id: Annotated[str, Path(pattern=r"^[0-9]{1,19}\.[0-9]{1,6}$")],
    principal: Operator,
    store: SyncStoreDep,
    ledger: LedgerDep,
) -> RetryOut:
    ids = {d.item_id for d in await _tenant_letters(store, ledger, principal.tenant)}
    if item_id not in ids:
        raise NotFoundError(f"dead letter {item_id}")
    return RetryOut(retried=await store.retry_dead([item_id]))
