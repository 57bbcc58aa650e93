"""Who may use a console page: the session cookie, the roles, CSRF and the subject's tenant.

- A page needs a session (else `SignInRequiredError`: GET pages redirect to sign-in); the
  session's principal passes the same rate limits as a bearer token.
- Roles follow the API's table exactly: reviewers and admins review, analysts only
  read profiles and their history, admins alone forget and retry dead letters.
- CSRF, as OWASP's cheat sheet recommends: every POST carries the session's CSRF token in its
  form (`csrf`, the synchronizer token pattern), compared in constant time; and a POST a
  browser marks as cross-site (Fetch Metadata, `Sec-Fetch-Site: cross-site`) is refused
  before any token is looked at.
- A subject of another tenant is the same 404 as no subject.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass
from typing import Annotated, Any
from uuid import UUID

from fastapi import Depends, Request

from factledger.api.console.session import SESSION_COOKIE, ConsoleSession, CookieSigner
from factledger.api.http.auth import Role
from factledger.api.http.deps import ApiState, check_tenant, read_tenant
from factledger.api.http.errors import ApiError, PermissionDeniedError
from factledger.api.settings import ConsoleSettings


class SignInRequiredError(ApiError):
    """No console session, or one that has ended."""


class CsrfRefusedError(ApiError):
    """A console form came without the session's CSRF token (or with another one)."""

    field = "csrf"


@dataclass(frozen=True, slots=True)
class ConsoleState:
    """What the console keeps: the API's state (verifier, limits, runtime) and its signer."""

    api: ApiState
    signer: CookieSigner
    settings: ConsoleSettings
    secure_cookies: bool  # Secure outside dev: a dev server is served over plain HTTP


def get_console(request: Request) -> ConsoleState:
    state: ConsoleState = request.app.state.console
    return state


ConsoleDep = Annotated[ConsoleState, Depends(get_console)]


async def get_session(request: Request, console: ConsoleDep) -> ConsoleSession:
    value = request.cookies.get(SESSION_COOKIE)
    session = console.signer.read_session(value, now=time.time())
    if session is None:
        raise SignInRequiredError("sign in to use the console")
    limiter = console.api.limiter
    if limiter is not None:
        await limiter.admit(session.tenant, session.principal_id, session.role.value)
    return session


SessionDep = Annotated[ConsoleSession, Depends(get_session)]


def console_roles(*roles: Role) -> Any:
    """A dependency admitting only sessions of the given roles (and returning the session)."""

    def check(session: SessionDep) -> ConsoleSession:
        if session.role not in roles:
            raise PermissionDeniedError(f"role {session.role.value} may not do this")
        return session

    return Depends(check)


Reviewing = Annotated[ConsoleSession, console_roles(Role.REVIEWER, Role.ADMIN)]
Reading = Annotated[ConsoleSession, console_roles(Role.REVIEWER, Role.ANALYST, Role.ADMIN)]
Administering = Annotated[ConsoleSession, console_roles(Role.ADMIN)]
CONSOLE_ROLES = frozenset({Role.REVIEWER, Role.ANALYST, Role.ADMIN})


CROSS_SITE = "cross-site"


def refuse_cross_site(request: Request) -> None:
    """Refuses a request the browser says another site started (older browsers send no
    `Sec-Fetch-Site`: the token alone guards them)."""
    if request.headers.get("sec-fetch-site") == CROSS_SITE:
        raise CsrfRefusedError("csrf: the browser marked this form as sent from another site")


async def check_csrf(request: Request, session: SessionDep) -> None:
    refuse_cross_site(request)
    form = await request.form()
    given = form.get("csrf")
    if not isinstance(given, str) or not hmac.compare_digest(given.encode(), session.csrf.encode()):
        raise CsrfRefusedError("csrf: the form's token is missing or does not match the session")


CSRF = Depends(check_csrf)


async def subject_in_tenant(console: ConsoleState, session: ConsoleSession, raw: UUID) -> UUID:
    """The subject of a page, checked against the session's tenant (404 otherwise)."""
    ledger = console.api.require_ports().ledger
    check_tenant(session.principal, await read_tenant(ledger, raw), str(raw))
    return raw
