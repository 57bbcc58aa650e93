"""FastAPI dependencies as `Annotated` aliases: the principal, roles, the subject, ports.

Every dependency is `async def`: none blocks (token checks are CPU-only and short), and
FastAPI runs a plain `def` dependency in a worker thread, a hop that cost more than the
dependency itself on every request. Dependencies read the app's state and the principal
from the request rather than through other dependencies: FastAPI walks every occurrence of a
sub-dependency on every request, even a cached one, and on a small request that walk is a
large part of the event loop's time.

- The principal comes only from the verified bearer token.
- The subject of a request comes from the token for agents (the path may say `me` or repeat
  the token's own subject id; anything else is refused), and from the path for the other roles,
  checked against their tenant: a subject of another tenant is the same 404 as no subject.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any
from uuid import UUID

from fastapi import Depends, Path, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.auth import Principal, Role, TokenVerifier
from factledger.api.http.errors import (
    AuthenticationError,
    InvalidParameterError,
    PermissionDeniedError,
    ServiceUnavailableError,
    SubjectNotFoundError,
)
from factledger.api.http.idempotency import (
    Idempotency,
    IdempotencyKeyHeader,
    IdempotencyRequest,
    digest_of,
    fingerprint_key_of,
    parse_key,
)
from factledger.api.http.metrics import ApiMetrics
from factledger.api.http.middleware import ARRIVED_AT
from factledger.api.http.overload import SAFE_METHODS, WriteLimiter
from factledger.api.http.rate_limit import RateLimiter
from factledger.api.http.stream_leases import StreamLeases
from factledger.api.settings import EventStreamSettings
from factledger.application.errors import NotFoundError, StoreUnavailableError
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import IdempotencyStore
from factledger.application.memory.ports import MemoryBackend
from factledger.application.sessions.ports import SafetyFilter, SessionBuffer
from factledger.application.sessions.short_term import ShortTermMemory
from factledger.domain.errors import DomainError

ME = "me"
_HEX = "[0-9a-fA-F]"
# Exactly what `path_subject_id` accepts, so the OpenAPI document states the real rule.
SUBJECT_PATH_PATTERN = rf"^(me|{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}})$"


@dataclass(slots=True)
class ApiState:
    """What the app keeps between requests; `ports`, the runtime `api.bootstrap` opens (or a
    test builds), is filled in by the lifespan.

    Parts the runtime lacks answer 503 on their routes. Its follower is caught up before
    profile reads so a caller reads its own writes (a no-op when nothing is new).
    """

    verifier: TokenVerifier
    metrics: ApiMetrics
    idempotency: IdempotencyStore  # used when the runtime brings no shared store
    writes: WriteLimiter
    ports: Runtime | None = None
    limiter: RateLimiter | None = None  # None: rate limits are off
    event_stream: EventStreamSettings = field(default_factory=EventStreamSettings)
    streams: StreamLeases = field(
        default_factory=lambda: StreamLeases(EventStreamSettings().max_per_principal)
    )

    def require_ports(self) -> Runtime:
        if self.ports is None:
            raise ServiceUnavailableError("the service is starting")
        return self.ports


def api_state(request: Request) -> ApiState:
    state: ApiState = request.app.state.api
    return state


async def get_state(request: Request) -> ApiState:
    return api_state(request)


StateDep = Annotated[ApiState, Depends(get_state)]
PRINCIPAL = "principal"  # the request's verified principal, in the ASGI scope's state


async def write_slot(request: Request) -> AsyncIterator[None]:
    """Holds one of the process's write slots for a command (reads pass straight through),
    out of the caller's tenant's share when the request carries a bearer token (the console's
    forms, signed in by cookie, take only the process's slot)."""
    if request.method in SAFE_METHODS:
        yield
        return
    tenant = None
    if bearer_credentials(request) is not None:
        tenant = (await principal_of(request)).tenant
    async with api_state(request).writes.slot(tenant):
        yield


# Given to every router except recall's and health's: their requests never wait for writes.
WRITE_SLOT = Depends(write_slot)

_bearer = HTTPBearer(auto_error=False, description="A JWT issued by the platform.")


async def get_principal(
    request: Request, state: ApiState, credentials: HTTPAuthorizationCredentials | None
) -> Principal:
    """The verified principal, admitted by the rate limits before any store is read; an
    address that sent too many bad tokens is refused before its token is looked at."""
    limiter = state.limiter
    address = request.client.host if request.client is not None else "unknown"
    if limiter is not None:
        await limiter.check_address(address)
    try:
        if credentials is None or credentials.scheme.lower() != "bearer":
            raise AuthenticationError("a bearer token is required")
        principal = state.verifier.verify(credentials.credentials)
    except AuthenticationError:
        if limiter is not None:
            await limiter.failed(address)
        raise
    if limiter is not None:
        await limiter.admit(principal.tenant, principal.id, principal.role.value)
    return principal


def bearer_credentials(request: Request) -> HTTPAuthorizationCredentials | None:
    """The `Authorization` header as `HTTPBearer(auto_error=False)` reads it."""
    authorization = request.headers.get("Authorization")
    scheme, credentials = get_authorization_scheme_param(authorization)
    if not (authorization and scheme and credentials):
        return None
    return HTTPAuthorizationCredentials(scheme=scheme, credentials=credentials)


async def principal_of(
    request: Request, credentials: HTTPAuthorizationCredentials | None = None
) -> Principal:
    """The request's principal, verified and admitted by the rate limits once per request
    whichever dependency asks first."""
    scope_state = request.scope.setdefault("state", {})
    principal = scope_state.get(PRINCIPAL)
    if isinstance(principal, Principal):
        return principal
    given = credentials or bearer_credentials(request)
    principal = await get_principal(request, api_state(request), given)
    scope_state[PRINCIPAL] = principal
    return principal


async def request_principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The dependency: `credentials` also declares the bearer scheme in the OpenAPI document."""
    return await principal_of(request, credentials)


PrincipalDep = Annotated[Principal, Depends(request_principal)]


def require_roles(*roles: Role) -> Any:
    """A dependency that admits only the given roles (and returns the principal)."""

    async def check(principal: PrincipalDep) -> Principal:
        principal.require(*roles)
        return principal

    return Depends(check)


AgentOrService = Annotated[Principal, require_roles(Role.AGENT, Role.SERVICE, Role.ADMIN)]
Reviewer = Annotated[Principal, require_roles(Role.REVIEWER, Role.ADMIN)]
Reader = Annotated[
    Principal, require_roles(Role.AGENT, Role.SERVICE, Role.REVIEWER, Role.ANALYST, Role.ADMIN)
]
# Subjects and single proposals: not analysts, who see proposals only redacted, in the feed.
SubjectReader = Annotated[
    Principal, require_roles(Role.AGENT, Role.SERVICE, Role.REVIEWER, Role.ADMIN)
]
Analyst = Annotated[Principal, require_roles(Role.ANALYST, Role.REVIEWER, Role.ADMIN)]
Operator = Annotated[Principal, require_roles(Role.ADMIN, Role.SERVICE)]
Registrar = Annotated[Principal, require_roles(Role.SERVICE, Role.ADMIN, Role.REVIEWER)]

SubjectPath = Annotated[
    str,
    Path(
        alias="subject",
        min_length=2,
        max_length=36,
        pattern=SUBJECT_PATH_PATTERN,
        description="`me` (agent tokens) or the subject id (a UUID).",
        examples=["me", "3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e"],
    ),
]


def path_subject_id(raw: str) -> UUID:
    try:
        return UUID(raw)
    except ValueError:
        raise InvalidParameterError("subject", "must be `me` or a subject id") from None


def check_agent_subject(principal: Principal, raw: str, own_id: UUID) -> UUID:
    """An agent may only name its own subject; the answer never depends on whether another
    subject exists."""
    if raw != ME and path_subject_id(raw) != own_id:
        raise PermissionDeniedError("this token is bound to another subject")
    return own_id


async def get_ledger(request: Request) -> Ledger:
    return api_state(request).require_ports().ledger


LedgerDep = Annotated[Ledger, Depends(get_ledger)]


def get_backend(state: StateDep) -> MemoryBackend | None:
    """The memory backend, where this process runs one (None: memory off or not opened)."""
    return None if state.ports is None else state.ports.backend


BackendDep = Annotated[MemoryBackend | None, Depends(get_backend)]


async def get_sessions(request: Request) -> ShortTermMemory:
    sessions = api_state(request).require_ports().sessions
    if sessions is None:
        raise ServiceUnavailableError("short-term memory is not configured")
    return sessions


async def get_session_buffer(request: Request) -> SessionBuffer:
    buffer = api_state(request).require_ports().session_buffer
    if buffer is None:
        raise ServiceUnavailableError("short-term memory is not configured")
    return buffer


async def get_safety(request: Request) -> SafetyFilter:
    return api_state(request).require_ports().safety


async def get_judge(request: Request) -> SentenceJudge | None:
    """The judge of the subject's answers; None when its heads did not load (fail closed)."""
    return api_state(request).require_ports().judge


SessionsDep = Annotated[ShortTermMemory, Depends(get_sessions)]
JudgeDep = Annotated[SentenceJudge | None, Depends(get_judge)]
SafetyDep = Annotated[SafetyFilter, Depends(get_safety)]
SessionBufferDep = Annotated[SessionBuffer, Depends(get_session_buffer)]


async def reference_subject_id(ledger: Ledger, tenant: str, kind: str, external_ref: str) -> UUID:
    """The id of the reference's first subject (`Ledger.subject_id_for`): keyed under the
    deployment's key, so derived by the ledger; without leaving the loop when no read is
    needed (`SubjectIds.derived_now`)."""
    known = ledger.subject_ids.derived_now(tenant, kind, external_ref)
    if known is not None:
        return known
    return await asyncio.to_thread(ledger.subject_id_for, tenant, kind, external_ref)


async def _bound_reference_subject_id(
    ledger: Ledger, tenant: str, kind: str, external_ref: str
) -> UUID:
    """`reference_subject_id` for a token bound to the reference, with the subject's tenant
    read in the same thread hop: every request of such a token checks the tenant next
    (`read_tenant`), which then finds it known and leaves the loop no second time. A subject
    not there yet, or a store that fails the read, is left for that check to answer. An id
    derived without a read leaves that read to the check (the hop is the same)."""
    known = ledger.subject_ids.derived_now(tenant, kind, external_ref)
    if known is not None:
        return known

    def resolve() -> UUID:
        subject_id = ledger.subject_id_for(tenant, kind, external_ref)
        with contextlib.suppress(NotFoundError, StoreUnavailableError):
            ledger.tenant_of(subject_id)
        return subject_id

    return await asyncio.to_thread(resolve)


async def own_subject_id(principal: Principal, ledger: Ledger) -> UUID:
    """The subject an agent token is bound to, as an id (a token by kind and reference names
    the reference's first subject)."""
    claim = principal.subject
    if claim is None:
        raise PermissionDeniedError("this token is not bound to a subject")
    try:
        if claim.subject_id is not None:
            return UUID(claim.subject_id)
        return await _bound_reference_subject_id(
            ledger, principal.tenant, claim.kind or "", claim.ref or ""
        )
    except (ValueError, DomainError):
        raise AuthenticationError("token claim subject invalid") from None


async def requested_subject_id(principal: Principal, ledger: Ledger, raw: str) -> UUID:
    """The subject the path names, as this principal may name it (not yet checked to exist)."""
    if principal.role is Role.AGENT:
        return check_agent_subject(principal, raw, await own_subject_id(principal, ledger))
    if raw == ME:
        raise InvalidParameterError("subject", "`me` is only for agent tokens")
    return path_subject_id(raw)


async def read_tenant(ledger: Ledger, subject_id: UUID) -> str | None:
    """The subject's tenant (None: no such subject); a known one without leaving the loop."""
    known = ledger.known_tenant(subject_id)
    if known is not None:
        return known
    try:
        return await asyncio.to_thread(ledger.tenant_of, subject_id)
    except NotFoundError:
        return None


def check_tenant(principal: Principal, tenant: str | None, raw: str) -> None:
    if tenant != principal.tenant:
        raise SubjectNotFoundError(f"subject {raw}")


async def checked_subject_id(principal: Principal, ledger: Ledger, raw: str) -> UUID:
    """The subject `raw` names, checked against the principal's tenant (404 otherwise).

    Reads only the subject's tenant (`Ledger.tenant_of`: its first event, then a cache), so the
    check costs the same on a subject of one event as on one of thousands.
    """
    subject_id = await requested_subject_id(principal, ledger, raw)
    check_tenant(principal, await read_tenant(ledger, subject_id), raw)
    return subject_id


async def get_subject_id(request: Request, raw: SubjectPath) -> UUID:
    """The subject of this request (`checked_subject_id`)."""
    principal = await principal_of(request)
    return await checked_subject_id(principal, api_state(request).require_ports().ledger, raw)


SubjectIdDep = Annotated[UUID, Depends(get_subject_id)]


def idempotency_store_of(state: ApiState) -> IdempotencyStore:
    """The shared store of saved responses (the runtime's, else the app's own)."""
    shared = None if state.ports is None else state.ports.idempotency
    return shared or state.idempotency


async def get_idempotency_store(request: Request) -> IdempotencyStore:
    return idempotency_store_of(api_state(request))


IdempotencyStoreDep = Annotated[IdempotencyStore, Depends(get_idempotency_store)]


def arrival_of(request: Request) -> float:
    """When the request reached this process (`time.monotonic()`), stamped by the middleware;
    now when no middleware stamped it."""
    arrived = request.scope.get("state", {}).get(ARRIVED_AT)
    return arrived if isinstance(arrived, float) else time.monotonic()


async def get_arrival(request: Request) -> float:
    """`arrival_of`, as a dependency."""
    return arrival_of(request)


ArrivalDep = Annotated[float, Depends(get_arrival)]


async def get_idempotency_request(
    request: Request, response: Response, key: IdempotencyKeyHeader = None
) -> IdempotencyRequest:
    principal = await principal_of(request)
    state, parsed = api_state(request), parse_key(key)
    # Only a keyed request is fingerprinted: the key store is not read for the others.
    fingerprints = None if parsed is None else state.require_ports().ledger.request_fingerprints
    return IdempotencyRequest(
        idempotency_store_of(state),
        tenant=principal.tenant,
        principal=principal.id,
        key=parsed,
        digest=b"" if parsed is None else await digest_of(request),
        fingerprint_key=None if fingerprints is None else await fingerprint_key_of(fingerprints),
        response=response,
    )


IdempotencyRequestDep = Annotated[IdempotencyRequest, Depends(get_idempotency_request)]


async def get_idempotency(request: IdempotencyRequestDep, subject_id: SubjectIdDep) -> Idempotency:
    """The key scoped to the subject of the path (checked against the token first)."""
    return request.for_subject(subject_id)


IdempotencyDep = Annotated[Idempotency, Depends(get_idempotency)]
