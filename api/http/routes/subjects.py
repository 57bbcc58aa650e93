"""Subjects: who am I, register, look up by reference, read one."""

from __future__ import annotations

import asyncio
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query, Request

from factledger.api.http.auth import Role
from factledger.api.http.deps import (
    IdempotencyRequestDep,
    LedgerDep,
    PrincipalDep,
    Registrar,
    SubjectIdDep,
    SubjectReader,
    api_state,
    own_subject_id,
    reference_subject_id,
)
from factledger.api.http.errors import SubjectNotFoundError
from factledger.api.http.schemas.common import ERRORS, SafeText
from factledger.api.http.schemas.subjects import (
    KIND_PATTERN,
    REF_PATTERN,
    RegisterSubjectIn,
    SubjectOut,
    WhoAmIOut,
)
from factledger.application.errors import NotFoundError
from factledger.application.ledger.commands import RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.domain.errors import SubjectErasedError
from factledger.domain.subject import Subject

router = APIRouter(prefix="/v1", tags=["subjects"], responses=ERRORS)  # type: ignore[arg-type]


def _out(subject: Subject, *, created: bool | None = None) -> SubjectOut:
    if subject.erased or subject.external_ref is None:
        # Its kind and external reference identify the person: an erased subject shows neither
        # (its reference is shredded anyway).
        raise SubjectErasedError(f"subject {subject.id}")
    return SubjectOut(
        subject_id=subject.id,
        kind=subject.kind,
        external_ref=subject.external_ref,
        profile_version=subject.profile_version,
        created=created,
    )


@router.get("/whoami", summary="The verified identity of the caller")
async def whoami(principal: PrincipalDep, request: Request) -> WhoAmIOut:
    own = None
    if principal.role is Role.AGENT:
        own = await own_subject_id(principal, api_state(request).require_ports().ledger)
    return WhoAmIOut(
        principal_id=principal.id,
        tenant=principal.tenant,
        role=principal.role.value,
        subject_id=own,
    )


@router.post("/subjects", status_code=201, summary="Register a subject (idempotent)")
async def register(
    body: RegisterSubjectIn, principal: Registrar, ledger: LedgerDep, key: IdempotencyRequestDep
) -> SubjectOut:
    cmd = RegisterSubject(principal.tenant, body.kind, body.external_ref, body.returning)
    subject_id = await reference_subject_id(ledger, principal.tenant, body.kind, body.external_ref)
    idem = key.for_subject(subject_id)

    async def run() -> SubjectOut:
        # An erased reference is refused by the ledger (410, with how to re-onboard).
        result = await asyncio.to_thread(ledger.register_subject, cmd)
        subject = await asyncio.to_thread(ledger.subject, principal.tenant, result.subject_id)
        return _out(subject, created=result.applied)

    # Registering is idempotent anyway; the key makes a retry report `created` as first said.
    return await idem.run(run, SubjectOut)


@router.get("/subjects/lookup", summary="Find a subject by kind and external reference")
async def lookup(
    principal: Registrar,
    ledger: LedgerDep,
    kind: Annotated[str, Query(pattern=KIND_PATTERN)],
    external_ref: Annotated[SafeText, Query(pattern=REF_PATTERN)],
) -> SubjectOut:
    try:
        # After erasures, the reference names its latest returning subject.
        subject_id = await asyncio.to_thread(
            ledger.current_subject_id, principal.tenant, kind, external_ref
        )
    except NotFoundError:
        raise SubjectNotFoundError("no subject under this kind and external_ref") from None
    return _out(await _load(ledger, principal.tenant, subject_id))


@router.get("/subjects/{subject}", summary="Read a subject (`me` for agent tokens)")  # noqa: FAST003
async def read(principal: SubjectReader, subject_id: SubjectIdDep, ledger: LedgerDep) -> SubjectOut:
    return _out(await _load(ledger, principal.tenant, subject_id))


async def _load(ledger: Ledger, tenant: str, subject_id: UUID) -> Subject:
    try:
        subject = await asyncio.to_thread(ledger.subject, tenant, subject_id)
    except NotFoundError:
        raise SubjectNotFoundError(f"subject {subject_id}") from None
    return subject
